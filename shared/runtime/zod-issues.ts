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

export function zodIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}
