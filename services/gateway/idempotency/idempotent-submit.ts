import { RPC_ROUTES, SubmitJobResponse } from "../../../shared/contract/index.js";
import { AppError, errorSpec } from "../../../shared/errors/index.js";
import { requestRpc, subjects } from "../../../shared/nats/index.js";
import { newId, newJobId } from "../../../shared/runtime/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { forward, userContext } from "../rpc/forward.js";
import { idempotencyRecordKey, readIdempotencyKey, REPLAYED_HEADER, requestFingerprint } from "./idempotency-key.js";

const route = RPC_ROUTES.submitJob;

/** An error that says the job was not made: the scheduler refused it (4xx). A 5xx leaves it unknown. */
function refusedBeforeCreate(error: unknown): boolean {
  return error instanceof AppError && errorSpec(error.code).http < 500;
}

/**
 * `POST /api/compute/jobs/submit`. Without an Idempotency-Key: one request to the
 * scheduler, nothing else. With one: the key's record names the job id to make; every
 * request with the key (concurrent ones too, through any gateway) asks the scheduler to
 * make the job under that id, and the scheduler answers with the job already there, so
 * one job is made. Requests other than the first answer with `Idempotent-Replayed: true`.
 * A first request the scheduler refused gives the key back.
 */
export function idempotentSubmit(gw: GatewayContext): RpcHandler<typeof route> {
  const plain = forward(gw, route, subjects.jobSubmit());
  return async (body, context) => {
    const key = readIdempotencyKey(context.requestHeader);
    if (key === undefined) return plain(body, context);
    const { caller, trace, responseHeaders } = context;
    const now = gw.clock.now();
    const recordKey = idempotencyRecordKey(caller, key);
    const holder = newId("idem");
    const fresh = { route: route.path, fingerprint: requestFingerprint(route.path, body), holder, claimed_at: now, job_id: newJobId(now), answer: null };
    const { record, first } = await gw.idempotency.claim(recordKey, fresh);
    const command = { caller: userContext(caller), body, job_id: record.value.job_id ?? undefined };
    try {
      const answer = await requestRpc(gw.nc, subjects.jobSubmit(), command, SubmitJobResponse, { trace });
      if (!first) responseHeaders.header(REPLAYED_HEADER, "true");
      return answer;
    } catch (error) {
      if (first && refusedBeforeCreate(error)) {
        await gw.idempotency.release(recordKey, holder).catch((releaseError: unknown) => context.log.warn({ err: releaseError }, "could not give an Idempotency-Key back"));
      }
      throw error;
    }
  };
}
