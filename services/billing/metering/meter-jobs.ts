import type { ConsumerMessages, JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { MeteringMessage } from "../../../shared/contract/index.js";
import { CONSUMERS, decodeJson, STREAMS } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import type { CreditContext } from "../credit/credit-context.js";
import { attemptsMetered, chargeDelaySeconds } from "../credit/credit-metrics.js";
import { attemptEnd } from "./charge.js";
import { ChargeBatcher } from "./charge-batcher.js";

/**
 * A message may announce an end whose compare-and-set is still in flight, or one that lost
 * its race to another end that will come later: it is looked at again after these delays,
 * the last one repeating until the attempt has ended.
 */
const OPEN_ATTEMPT_DELAYS_MS = [50, 250, 1000, 2000, 5000, 10_000, 30_000, 60_000];
/** A record that is missing is looked for this many times, then the message is dropped. */
const MISSING_RECORD_TRIES = 8;
/**
 * Messages a replica works on at once (and asks the consumer for): enough that a busy
 * account's charges gather into batches while one write is under way.
 */
const IN_FLIGHT = 256;

function delayFor(msg: JsMsg): number {
  return OPEN_ATTEMPT_DELAYS_MS[Math.min(msg.info.deliveryCount, OPEN_ATTEMPT_DELAYS_MS.length) - 1] as number;
}

/**
 * Charges ended attempts from the shared durable consumer (each message goes to one billing
 * replica), up to IN_FLIGHT at once, each account's charges written in batches
 * (`ChargeBatcher`). A message is acknowledged only after the ledger recorded its effect; a
 * redelivered or repeated one finds its entry id applied and changes nothing.
 */
export async function consumeMetering(ctx: CreditContext, js: JetStreamClient): Promise<ConsumerMessages> {
  const consumer = await js.consumers.get(STREAMS.metering, CONSUMERS.billingMetering);
  const messages = await consumer.consume({ max_messages: IN_FLIGHT });
  const batcher = new ChargeBatcher(ctx);
  const inFlight = new Set<Promise<void>>();
  void (async () => {
    for await (const msg of messages) {
      const work = meter(ctx, batcher, msg)
        .catch((error: unknown) => {
          ctx.logger.warn({ err: error, seq: msg.seq }, "could not charge a metering message; it will be redelivered");
          msg.nak(1000);
        })
        .finally(() => inFlight.delete(work));
      inFlight.add(work);
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    }
  })();
  return messages;
}

async function meter(ctx: CreditContext, batcher: ChargeBatcher, msg: JsMsg): Promise<void> {
  const parsed = MeteringMessage.safeParse(decodeJson(msg.data));
  if (!parsed.success) {
    ctx.logger.error({ seq: msg.seq }, "dropping a malformed metering message");
    msg.term();
    return;
  }
  const { job_key: jobKey, job_id: jobId, attempt } = parsed.data;
  const stored = await ctx.jobs.get(jobKey);
  if (!stored) {
    if (msg.info.deliveryCount < MISSING_RECORD_TRIES) msg.nak(delayFor(msg));
    else {
      ctx.logger.error({ job_id: jobId, attempt }, "dropping a metering message whose job record does not exist");
      msg.term();
    }
    return;
  }
  const job: JobRecord = stored.value;
  const end = attemptEnd(job, attempt);
  switch (end.status) {
    case "open":
      msg.nak(delayFor(msg));
      return;
    case "unknown":
      ctx.logger.error(
        { job_id: jobId, attempt },
        "dropping a metering message: the job's timeline no longer shows the attempt",
      );
      msg.term();
      return;
    case "free":
      ctx.logger.debug({ job_id: jobId, attempt, why: end.why }, "attempt ended without a charge");
      msg.ack();
      attemptsMetered.inc({ result: "free" });
      return;
    case "charged": {
      const recorded = await batcher.charge(job, attempt, end);
      msg.ack();
      // From the attempt's end being announced to its charge: how far the credit check's balance lags.
      chargeDelaySeconds.observe(Math.max(0, ctx.clock.now() - msg.info.timestampNanos / 1e6) / 1000);
      if (!recorded) {
        attemptsMetered.inc({ result: "free" });
        return;
      }
      attemptsMetered.inc({ result: recorded.duplicate ? "duplicate" : "charged" });
      if (!recorded.duplicate)
        ctx.logger.info(
          { job_id: jobId, attempt, amount: recorded.entry.amount, balance: recorded.entry.balance_after },
          "attempt charged",
        );
      return;
    }
  }
}
