import type { FastifyRequest } from "fastify";
import type { RpcRoutes } from "../../../shared/contract/index.js";
import { AppError, type ErrorDetails, isAppError } from "../../../shared/errors/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { requestHeader } from "../http/request-header.js";
import { sha256Hex } from "../identity/secrets.js";

/** Nodes remembered at most; past it, the one remembered first is forgotten (its next push asks the log relay again). */
const MAX_NODES = 10_000;
/** How far away a refusal's `resets_at` may be and be believed: a node's hour, a business's day. */
const LONGEST_MS = { node_hour: 60 * 60 * 1000, business_day: 24 * 60 * 60 * 1000 } as const;
type RememberedLimit = keyof typeof LONGEST_MS;

interface Refusal {
  untilMs: number;
  message: string;
  details: ErrorDetails;
}

/** What a request presents as its caller: its app and credential headers. */
export interface PresentedCredential {
  appId: string | undefined;
  authorization: string | undefined;
  apiKey: string | undefined;
}

/**
 * The nodes this gateway replica has seen the log relay refuse for their log bytes of the
 * hour (429 `logs.quota_exceeded`, `details.limit` "node_hour"): until the hour resets
 * (`details.resets_at`), a later push with the same credential is refused here with the
 * same answer, before its body is read, parsed or sent on. A node past its quota that
 * keeps pushing large batches then costs the gateway a header lookup, not a parse and a
 * forward of each batch, which other tenants' requests would wait behind.
 *
 * Keyed by the SHA-256 of the app id and credential headers exactly as presented: a
 * request with any other credential (another node, the same node after a key rotation) is
 * never refused here, and no credential is kept. A business's day (`business_day`) is
 * the job's business's: it is remembered for a node that runs only its own business's
 * jobs (any business's but the operator's, whose nodes serve every tenant's jobs on its
 * pools); an operator's node's such refusals are left to the log relay.
 */
export class SpentNodeQuotas {
  private readonly refusals = new Map<string, Refusal>();

  constructor(
    private readonly clock: Clock,
    /** Whether a business's nodes run only its own jobs (it is not the operator's). */
    private readonly runsOnlyOwnJobs: (businessId: string) => Promise<boolean> = async () => false,
  ) {}

  get size(): number {
    return this.refusals.size;
  }

  /** Throws the remembered refusal of this credential while it is in force. */
  check(presented: PresentedCredential): void {
    const key = credentialKey(presented);
    const refusal = key === undefined ? undefined : this.refusals.get(key);
    if (!refusal) return;
    if (this.clock.now() >= refusal.untilMs) {
      this.refusals.delete(key!);
      return;
    }
    throw new AppError("logs.quota_exceeded", refusal.message, { details: refusal.details });
  }

  /**
   * Remembers `error` for this credential if it is the log relay's refusal of a node's
   * hour, or of its business's day when `ownJobsOnly` (the node runs no other business's).
   */
  remember(presented: PresentedCredential, error: unknown, ownJobsOnly = false): void {
    const limit = quotaLimitOf(error);
    if (limit === undefined || (limit === "business_day" && !ownJobsOnly)) return;
    const key = credentialKey(presented);
    const resetsAtMs = Date.parse(String((error as AppError).details?.resets_at));
    const now = this.clock.now();
    if (key === undefined || !(resetsAtMs > now) || resetsAtMs - now > LONGEST_MS[limit]) return;
    this.refusals.delete(key);
    if (this.refusals.size >= MAX_NODES) this.forgetOne(now);
    const { message, details } = error as AppError;
    this.refusals.set(key, { untilMs: resetsAtMs, message, details: details ?? {} });
  }

  /** The push handler, remembering the refusals it passes on; over NATS (no headers) it remembers nothing. */
  remembering(handler: RpcHandler<RpcRoutes["pushLogs"]>): RpcHandler<RpcRoutes["pushLogs"]> {
    return async (body, context) => {
      try {
        return await handler(body, context);
      } catch (error) {
        const ownJobsOnly =
          quotaLimitOf(error) === "business_day" &&
          (await this.runsOnlyOwnJobs(context.caller.business_id).catch(() => false));
        this.remember(
          {
            appId: context.requestHeader("x-app-id"),
            authorization: context.requestHeader("authorization"),
            apiKey: context.requestHeader("x-api-key"),
          },
          error,
          ownJobsOnly,
        );
        throw error;
      }
    };
  }

  /** The route's `onRequest` hook: refuses a remembered node before its body is read. */
  readonly onRequest = async (request: FastifyRequest): Promise<void> => {
    this.check({
      appId: requestHeader(request, "x-app-id"),
      authorization: requestHeader(request, "authorization"),
      apiKey: requestHeader(request, "x-api-key"),
    });
  };

  /** Makes room: the refusals already over, else the one remembered first. */
  private forgetOne(now: number): void {
    for (const [key, refusal] of this.refusals) if (now >= refusal.untilMs) this.refusals.delete(key);
    if (this.refusals.size < MAX_NODES) return;
    const first = this.refusals.keys().next();
    if (!first.done) this.refusals.delete(first.value);
  }
}

/** The limit a log relay's quota refusal names, when it is one this replica remembers. */
function quotaLimitOf(error: unknown): RememberedLimit | undefined {
  if (!isAppError(error) || error.code !== "logs.quota_exceeded") return undefined;
  const limit = error.details?.limit;
  return limit === "node_hour" || limit === "business_day" ? limit : undefined;
}

function credentialKey({ appId, authorization, apiKey }: PresentedCredential): string | undefined {
  if (authorization === undefined && apiKey === undefined) return undefined;
  return sha256Hex(JSON.stringify([appId ?? null, authorization ?? null, apiKey ?? null]));
}
