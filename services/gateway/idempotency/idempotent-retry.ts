import { IDEMPOTENT_REPLAYED_HEADER, JobPayload, RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { forward } from "../rpc/forward.js";
import { idempotencyRecordKey, readIdempotencyKey, requestFingerprint } from "./idempotency-key.js";
import { settleKey } from "./settle-key.js";

const route = RPC_ROUTES.retryJob;

/**
 * `POST /api/compute/jobs/retry`. Without an Idempotency-Key: one request to the
 * scheduler. With one: the first request claims the key, retries the job and stores its
 * answer; a repeat replays that answer (`Idempotent-Replayed: true`), waiting for it while
 * the first is at work, and is 409 `idempotency.in_progress` if it does not come in time.
 * A claim whose gateway stopped is taken over. A failed first request gives the key back:
 * a retry is guarded by the job's state, so doing it again can never run the job twice.
 */
export function idempotentRetry(gw: GatewayContext): RpcHandler<typeof route> {
  const plain = forward(gw, "retryJob");
  return async (body, context) => {
    const key = readIdempotencyKey(context.requestHeader);
    if (key === undefined) return plain(body, context);
    const { log, responseHeaders } = context;
    const recordKey = idempotencyRecordKey(context.caller, key);
    const standing = await settleKey(
      gw,
      recordKey,
      { route: route.path, fingerprint: requestFingerprint(route.path, body), job_id: null },
      { takeOver: true },
    );
    if (standing.kind === "answered") {
      responseHeaders.header(IDEMPOTENT_REPLAYED_HEADER, "true");
      return JobPayload.parse(standing.answer);
    }
    if (standing.kind === "unsettled") {
      throw new AppError(
        "idempotency.in_progress",
        "A request with this Idempotency-Key is still being served; try again shortly for its answer.",
        { retryAfterSeconds: 1 },
      );
    }
    const warn = (message: string) => (error: unknown) => log.warn({ err: error }, message);
    try {
      const answer = await plain(body, context);
      await gw.idempotency
        .complete(recordKey, standing.holder, answer)
        .catch(warn("could not store an idempotent answer"));
      return answer;
    } catch (error) {
      await gw.idempotency.release(recordKey, standing.holder).catch(warn("could not give an Idempotency-Key back"));
      throw error;
    }
  };
}
