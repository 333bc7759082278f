import { setTimeout as delay } from "node:timers/promises";
import { JobPayload, RPC_ROUTES } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { subjects } from "../../../shared/nats/index.js";
import { newId } from "../../../shared/runtime/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { forward } from "../rpc/forward.js";
import { idempotencyRecordKey, readIdempotencyKey, REPLAYED_HEADER, requestFingerprint } from "./idempotency-key.js";
import type { IdempotencyRecord } from "./idempotency-store.js";

const route = RPC_ROUTES.retryJob;

/** How long a repeat waits for the first request's answer before 409 `idempotency.in_progress`. */
const WAIT_FOR_ANSWER_MS = 5_000;
/** The first and the longest pause between two reads of a key still being served. */
const FIRST_PAUSE_MS = 20;
const LONGEST_PAUSE_MS = 250;
/**
 * A claim this old belongs to a request that will not finish (its gateway stopped): well
 * past the longest a retry request to the scheduler may take.
 */
export const CLAIM_TAKEOVER_MS = 30_000;

/**
 * `POST /api/compute/jobs/retry`. Without an Idempotency-Key: one request to the
 * scheduler. With one: the first request claims the key, retries the job and stores its
 * answer; a repeat answers with that stored answer (`Idempotent-Replayed: true`), waiting
 * up to WAIT_FOR_ANSWER_MS for it while the first is at work (then 409
 * `idempotency.in_progress`). A failed first request gives the key back: a retry is
 * guarded by the job's state, so doing it again can never run the job twice.
 */
export function idempotentRetry(gw: GatewayContext): RpcHandler<typeof route> {
  const plain = forward(gw, route, subjects.jobRetry());
  return async (body, context) => {
    const key = readIdempotencyKey(context.requestHeader);
    if (key === undefined) return plain(body, context);
    const recordKey = idempotencyRecordKey(context.caller, key);
    const fingerprint = requestFingerprint(route.path, body);
    const holder = newId("idem");

    const serve = async (): Promise<JobPayload> => {
      try {
        const answer = await plain(body, context);
        await gw.idempotency.complete(recordKey, holder, answer).catch((error: unknown) => context.log.warn({ err: error }, "could not store an idempotent answer"));
        return answer as JobPayload;
      } catch (error) {
        await gw.idempotency.release(recordKey, holder).catch((releaseError: unknown) => context.log.warn({ err: releaseError }, "could not give an Idempotency-Key back"));
        throw error;
      }
    };
    const replay = (record: IdempotencyRecord): JobPayload => {
      context.responseHeaders.header(REPLAYED_HEADER, "true");
      return JobPayload.parse(record.answer);
    };

    const waitUntil = performance.now() + WAIT_FOR_ANSWER_MS;
    for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
      const now = gw.clock.now();
      const { record, first } = await gw.idempotency.claim(recordKey, { route: route.path, fingerprint, holder, claimed_at: now, job_id: null, answer: null });
      if (first) return serve();
      if (record.value.answer !== null) return replay(record.value);
      if (now - record.value.claimed_at >= CLAIM_TAKEOVER_MS && (await gw.idempotency.takeOver(recordKey, record, holder, now))) return serve();
      if (performance.now() >= waitUntil) {
        throw new AppError("idempotency.in_progress", "A request with this Idempotency-Key is still being served; try again shortly for its answer.", { retryAfterSeconds: 1 });
      }
      await delay(pause);
    }
  };
}
