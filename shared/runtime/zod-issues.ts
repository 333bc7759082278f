import type { z } from "zod";

/** One problem of a request, as listed in `details.issues` of `request.invalid`. */
export interface FieldIssue {
  /** Where the problem is, e.g. `capacity.cpu` or `labels[2]`; empty for the body itself. */
  path: string;
  message: string;
}

export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, part) => {
    if (typeof part === "number") return `${text}[${part}]`;
    return text === "" ? String(part) : `${text}.${String(part)}`;
  }, "");
}

/** One entry per problem; an unknown field is reported at its own path, so the caller sees which. */
export function zodIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: "Unknown field" }))
      : [{ path: formatPath(issue.path), message: issue.message }],
  );
}
