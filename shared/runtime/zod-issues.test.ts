import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatPath, zodIssues } from "./zod-issues.js";

describe("zodIssues", () => {
  const Schema = z.strictObject({
    name: z.string().min(1),
    capacity: z.strictObject({ cpu: z.number().positive() }),
    labels: z.array(z.string()),
  });

  it("lists each problem with the path of its field", () => {
    const result = Schema.safeParse({ name: "", capacity: { cpu: -1 }, labels: ["ok", 3] });
    expect(result.success).toBe(false);
    const issues = zodIssues(result.error as z.ZodError);
    expect(issues.map((issue) => issue.path).sort()).toEqual(["capacity.cpu", "labels[1]", "name"]);
  });

  it("names each unknown field at its own path", () => {
    const result = Schema.safeParse({ name: "x", capacity: { cpu: 1, gpu: 2 }, labels: [], extra: true });
    expect(zodIssues(result.error as z.ZodError)).toEqual([
      { path: "capacity.gpu", message: "Unknown field" },
      { path: "extra", message: "Unknown field" },
    ]);
  });

  it("formats an empty path as the body itself", () => {
    expect(formatPath([])).toBe("");
  });
});
