import { describe, expect, it } from "vitest";
import { newId, toBase62 } from "../runtime/index.js";
import { ArtifactId, checkId, ID_FORMATS, type IdKind, isId, JobId, MalformedIdError } from "./ids.js";

/** An id of each kind as the service makes it (schedules and webhooks: the reserved format). */
const MADE: Record<IdKind, string> = {
  app: "local",
  business: newId("biz"),
  user: newId("usr"),
  session: newId("ses"),
  key: newId("key"),
  node: newId("nod"),
  job: `job_${toBase62(Date.now(), 8)}${newId("x").slice(2, 14)}`,
  artifact: "report.v2.csv",
  schedule: newId("sch"),
  webhook: newId("whk"),
};

function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/** Wildcards, separators and control characters: none may reach a subject or a key. */
const HOSTILE = ["", "*", ">", ".", " ", "\0", "/", "..", "a b", "a\0b", "../x", "a/b", "a*", "a>", "\n"];

describe("id formats", () => {
  it("accept an id of each kind as the service makes it", () => {
    for (const [kind, id] of Object.entries(MADE) as Array<[IdKind, string]>) expect(isId(kind, id), kind).toBe(true);
  });

  it("refuse wildcards, separators and control characters for every kind", () => {
    for (const kind of Object.keys(ID_FORMATS) as IdKind[]) {
      for (const bad of HOSTILE) expect(isId(kind, bad), `${kind} ${JSON.stringify(bad)}`).toBe(false);
      expect(isId(kind, `${MADE[kind]}*`), kind).toBe(false);
      expect(isId(kind, `${MADE[kind]}\0`), kind).toBe(false);
    }
  });

  it("refuse an id of another kind", () => {
    expect(isId("key", MADE.node)).toBe(false);
    expect(isId("job", MADE.business)).toBe(false);
    expect(isId("node", "nod_*")).toBe(false);
  });

  it("let an artifact id hold dots but never be '.' or '..', nor longer than 200", () => {
    expect(ArtifactId.safeParse("a.b.c").success).toBe(true);
    expect(ArtifactId.safeParse(".").success).toBe(false);
    expect(ArtifactId.safeParse("..").success).toBe(false);
    expect(ArtifactId.safeParse("x".repeat(201)).success).toBe(false);
  });

  it("are the same rule in the schema and in checkId", () => {
    for (const candidate of [...HOSTILE, MADE.job, "job_0VbeygdjkkWnwRC9cwe1x"]) {
      expect(JobId.safeParse(candidate).success).toBe(isId("job", candidate));
    }
  });

  it("checkId returns a good id and throws MalformedIdError (request.invalid, no echo of the input) for a bad one", () => {
    expect(checkId("key", MADE.key)).toBe(MADE.key);
    const thrown = thrownBy(() => checkId("key", "key_*"));
    expect(thrown).toBeInstanceOf(MalformedIdError);
    expect(thrown).toMatchObject({
      code: "request.invalid",
      httpStatus: 400,
      details: { issues: [{ path: "key_id" }] },
    });
    expect(JSON.stringify((thrown as MalformedIdError).toData())).not.toContain("key_*");
  });
});
