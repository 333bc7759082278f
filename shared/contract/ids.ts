import { z } from "zod";
import { AppError } from "../errors/index.js";

/** The body of every id the service makes: 20 base62 characters (a job id's first 8 are its creation time). */
const MADE_ID_BODY_LENGTH = 20;
const MADE_ID_BODY = `[0-9A-Za-z]{${MADE_ID_BODY_LENGTH}}`;
/** The longest artifact id: a file name of at most this many characters. */
export const ARTIFACT_ID_MAX_LENGTH = 200;
/**
 * The longest id a path parameter carries (an artifact id; a job id is its three-letter
 * prefix, `_` and the body): the HTTP router's limit on a parameter's length.
 */
export const PATH_PARAM_MAX_LENGTH = Math.max(ARTIFACT_ID_MAX_LENGTH, "job_".length + MADE_ID_BODY_LENGTH);

function madeId(prefix: string): RegExp {
  return new RegExp(`^${prefix}_${MADE_ID_BODY}$`);
}

/** What a made id looks like, in words: a wrong one is usually the right prefix with the wrong rest. */
function madeIdMessage(name: string, prefix: string): string {
  return `${name}: \`${prefix}_\` and ${MADE_ID_BODY_LENGTH} letters or digits`;
}

/**
 * The format of every id type, the one rule for each: a request schema checks it, and so
 * does every helper that puts an id into a NATS subject, a KV key or an object name
 * (`checkId`), so no id reaches NATS unchecked. None admits `.`-separated levels,
 * wildcards (`*`, `>`), spaces, `/` or control characters, except that an artifact id may
 * hold dots (it is encoded where it becomes a key, and is never `.` or `..`).
 */
export const ID_FORMATS = {
  /** Chosen by the operator; sent as `X-App-ID`. */
  app: {
    pattern: /^[a-z0-9][a-z0-9_-]{0,62}$/,
    message: "lowercase letters, digits, '-' or '_', at most 63 characters",
  },
  business: { pattern: madeId("biz"), message: madeIdMessage("a business id", "biz") },
  user: { pattern: madeId("usr"), message: madeIdMessage("a user id", "usr") },
  session: { pattern: madeId("ses"), message: madeIdMessage("a session id", "ses") },
  key: { pattern: madeId("key"), message: madeIdMessage("an API key id", "key") },
  node: { pattern: madeId("nod"), message: madeIdMessage("a node id", "nod") },
  /** `job_`, 8 base62 characters of the creation time in ms (so ids sort by age), 12 random. */
  job: { pattern: madeId("job"), message: madeIdMessage("a job id", "job") },
  /** A file name within its job. */
  artifact: {
    pattern: new RegExp(`^(?!\\.{1,2}$)[A-Za-z0-9._-]{1,${ARTIFACT_ID_MAX_LENGTH}}$`),
    message: `1 to ${ARTIFACT_ID_MAX_LENGTH} letters, digits, '.', '_' or '-', not '.' or '..'`,
  },
  /** `sch_`, 8 base62 characters of the creation time in ms (so ids sort by age), 12 random. */
  schedule: { pattern: madeId("sch"), message: madeIdMessage("a schedule id", "sch") },
  /** An outgoing webhook of a business. */
  webhook: { pattern: madeId("whk"), message: madeIdMessage("a webhook id", "whk") },
} as const satisfies Record<string, { pattern: RegExp; message: string }>;

export type IdKind = keyof typeof ID_FORMATS;

function idSchema(kind: IdKind) {
  return z.string().regex(ID_FORMATS[kind].pattern, ID_FORMATS[kind].message);
}

/** Application id issued by the operator; sent as `X-App-ID`. */
export const AppId = idSchema("app");
export type AppId = z.infer<typeof AppId>;
export const BusinessId = idSchema("business");
export const UserId = idSchema("user");
export const SessionId = idSchema("session");
/** An API key's public id (`key_…`), as listed and revoked; a node's keys have one too. */
export const ApiKeyId = idSchema("key");
export const NodeId = idSchema("node");
export const JobId = idSchema("job");
/** An artifact's name within its job: a file name of 1 to 200 characters of `A-Z a-z 0-9 . _ -`, not `.` or `..`. */
export const ArtifactId = idSchema("artifact");
export type ArtifactId = z.infer<typeof ArtifactId>;
export const ScheduleId = idSchema("schedule");
export const WebhookId = idSchema("webhook");

/** Whether `value` is an id of this kind. */
export function isId(kind: IdKind, value: unknown): value is string {
  return typeof value === "string" && ID_FORMATS[kind].pattern.test(value);
}

/**
 * An id that is not of its kind's format, found where it was about to become part of a
 * subject, a key or an object name. It is `request.invalid` (400) at the edge: nothing
 * was read or changed. The message names the kind, never the text that was sent.
 */
export class MalformedIdError extends AppError {
  /** The kind of id expected; undefined for a level of a key or subject that is no id. */
  readonly kind: IdKind | undefined;

  constructor(kind?: IdKind) {
    super("request.invalid", kind === undefined ? "That does not name a record." : `That is not a ${kind} id.`, {
      details: {
        issues: [
          kind === undefined
            ? { path: "id", message: "the id of a record" }
            : { path: `${kind}_id`, message: ID_FORMATS[kind].message },
        ],
      },
    });
    this.name = "MalformedIdError";
    this.kind = kind;
  }
}

/** Returns the id when it has its kind's format; throws `MalformedIdError` otherwise. */
export function checkId(kind: IdKind, value: string): string {
  if (!isId(kind, value)) throw new MalformedIdError(kind);
  return value;
}
