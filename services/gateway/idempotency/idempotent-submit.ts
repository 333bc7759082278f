import { IDEMPOTENT_REPLAYED_HEADER, RPC_ROUTES, SubmitJobResponse } from "../../../shared/contract/index.js";
import { AppError, errorSpec } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import { newJobId } from "../../../shared/runtime/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { userContext } from "../rpc/forward.js";
import { submitJob } from "../rpc/submit-job.js";
import { idempotencyRecordKey, readIdempotencyKey, requestFingerprint } from "./idempotency-key.js";
import { settleKey } from "./settle-key.js";

const route = RPC_ROUTES.submitJob;

/** An error that says the job was not made: the scheduler refused it (4xx). A 5xx leaves it unknown. */
function refusedBeforeCreate(error: unknown): boolean {
  return error instanceof AppError && errorSpec(error.code).http < 500;
}

/**
 * `POST /api/compute/jobs/submit`. Without an Idempotency-Key: one request to the
 * scheduler, nothing else. With one: the first request claims the key with a job id chosen
 * now, submits the job under that id and stores the answer; repeats replay the stored
 * answer (waiting for it while the first is at work). A repeat that finds no answer to wait
 * for (the first stopped, or took too long) submits under the same id itself: the scheduler
 * answers with the job already made under it, so the key still makes one job. A first
 * request the scheduler refused (4xx) gives the key back, keeping its job id for a repeat of
 * the same body (one that stopped waiting may have made the job meanwhile); one that ended
 * in a 5xx leaves it, marked for the next repeat to submit at once. A dry run (`dry_run: true`) checks the key's
 * form but does not use it.
 */
export function idempotentSubmit(gw: GatewayContext): RpcHandler<typeof route> {
  const plain = submitJob(gw);
  return async (body, context) => {
    const key = readIdempotencyKey(context.requestHeader);
    // A dry run makes nothing, so there is nothing to make once.
    if (key === undefined || body.dry_run) return plain(body, context);
    const { caller, trace, log, responseHeaders } = context;
    const recordKey = idempotencyRecordKey(caller, key);
    const request = {
      route: route.path,
      fingerprint: requestFingerprint(route.path, body),
      job_id: newJobId(gw.clock.now()),
    };
    const standing = await settleKey(gw, recordKey, request, { takeOver: false });
    if (standing.kind === "answered") {
      responseHeaders.header(IDEMPOTENT_REPLAYED_HEADER, "true");
      return SubmitJobResponse.parse(standing.answer);
    }
    const command = {
      caller: userContext(caller),
      body,
      job_id: standing.record.job_id ?? request.job_id,
      // The key's first claim: its job id was chosen just now, so the scheduler need not look for a job under it.
      ...(standing.kind === "holder" && standing.first ? { job_id_new: true } : {}),
    };
    const submit = () => requestRpc(gw.nc, "jobSubmit", command, { trace });
    if (standing.kind === "unsettled") {
      const answer = await submit();
      responseHeaders.header(IDEMPOTENT_REPLAYED_HEADER, "true");
      return answer;
    }
    const warn = (message: string) => (error: unknown) => log.warn({ err: error }, message);
    try {
      const answer = await submit();
      await gw.idempotency
        .complete(recordKey, standing.holder, answer)
        .catch(warn("could not store an idempotent answer"));
      return answer;
    } catch (error) {
      if (refusedBeforeCreate(error))
        await gw.idempotency.release(recordKey, standing.holder).catch(warn("could not give an Idempotency-Key back"));
      else
        await gw.idempotency
          .abandon(recordKey, standing.holder)
          .catch(warn("could not mark an Idempotency-Key unsettled"));
      throw error;
    }
  };
}
