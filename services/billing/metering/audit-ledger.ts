import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { BUCKETS, CONSUMERS, decodeJson, ensureConsumer, STREAMS, subjects } from "../../../shared/nats/index.js";
import { JobRecord, mayHaveChargedAttempt, operatorJobKeyFilters } from "../../../shared/records/index.js";
import type { CreditContext } from "../credit/credit-context.js";
import { ledgerRepairs } from "../credit/credit-metrics.js";
import { chargedAttempts } from "./charge.js";
import { debitAttempt } from "./debit-attempt.js";

/** The job records' stream, and the subjects of the operator pools' jobs: a self-hosted job is never charged, so never read here. */
const JOBS_STREAM = `KV_${BUCKETS.jobs}`;
const OPERATOR_JOB_SUBJECTS = operatorJobKeyFilters().map((filter) => `$KV.${BUCKETS.jobs}.${filter}`);
const ACK_WAIT_MS = 30_000;
/** A revision held back for its grace counts here until audited: far above the attempts that end in one grace. */
const MAX_ACK_PENDING = 20_000;
const RETRY_AFTER_ERROR_MS = 1000;

export interface LedgerAudit {
  stop(): Promise<void>;
}

/**
 * Audits the ledger against the job records, without trusting metering: every revision of
 * a job record goes to one billing replica (a durable consumer on the bucket's stream), and
 * an attempt the record shows charged whose debit the ledger lacks is charged then. A
 * revision is acknowledged only after its check, so one a replica dies with comes back.
 */
export async function startLedgerAudit(ctx: CreditContext, options: { graceMs: number }): Promise<LedgerAudit> {
  const jsm = await jetstreamManager(ctx.nc);
  await ensureConsumer(jsm, JOBS_STREAM, {
    durable_name: CONSUMERS.billingLedgerAudit,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(ACK_WAIT_MS),
    max_ack_pending: MAX_ACK_PENDING,
    max_deliver: -1,
    filter_subjects: OPERATOR_JOB_SUBJECTS,
  });
  const consumer = await jetstream(ctx.nc).consumers.get(JOBS_STREAM, CONSUMERS.billingLedgerAudit);
  const messages = await consumer.consume({ max_messages: 64 });
  void (async () => {
    for await (const msg of messages) {
      await auditRevision(ctx, jsm, options.graceMs, msg).catch((error: unknown) => {
        ctx.logger.warn({ err: error, seq: msg.seq }, "could not audit a job record revision; it will be redelivered");
        msg.nak(RETRY_AFTER_ERROR_MS);
      });
    }
  })();
  return {
    async stop() {
      await messages.close();
    },
  };
}

export async function auditRevision(
  ctx: CreditContext,
  jsm: JetStreamManager,
  graceMs: number,
  msg: JsMsg,
): Promise<void> {
  // A delete or purge marker: no record, the operation in a header.
  if (msg.headers?.has("KV-Operation")) {
    msg.ack();
    return;
  }
  if (!mayHaveChargedAttempt(msg.data)) {
    msg.ack();
    return;
  }
  const parsed = JobRecord.safeParse(decodeJson(msg.data));
  if (!parsed.success) {
    ctx.logger.error({ seq: msg.seq, subject: msg.subject }, "the ledger audit skips a job record it cannot read");
    msg.term();
    return;
  }
  const job = parsed.data;
  const charged = chargedAttempts(job);
  if (charged.length === 0) {
    msg.ack();
    return;
  }
  // Metering goes first. Capped at the grace, so a clock behind the scheduler's holds nothing long.
  const waitMs = Math.max(...charged.map(({ end }) => Date.parse(end.ended_at))) + graceMs - ctx.clock.now();
  if (waitMs > 0) {
    msg.nak(Math.min(waitMs, graceMs));
    return;
  }
  const account = { app_id: job.app_id, business_id: job.business_id };
  // The operator's own business is not billed: no debit is missing.
  if (await ctx.isOperatorAccount(account)) {
    msg.ack();
    return;
  }
  for (const { attempt, end } of charged) {
    if (await ctx.ledger.hasJobDebit(account, job.job_id, attempt)) continue;
    // Metering still holds a message of the job (it is removed only once charged): it charges, or is still waiting for the end.
    if (await jsm.streams.getMessage(STREAMS.metering, { last_by_subj: subjects.metering(job.job_id) })) {
      msg.nak(graceMs);
      return;
    }
    const recorded = await debitAttempt(ctx, job, attempt, end);
    if (recorded && !recorded.duplicate) {
      ledgerRepairs.inc();
      ctx.logger.warn(
        { job_id: job.job_id, attempt, amount: recorded.entry.amount, balance: recorded.entry.balance_after },
        "ledger audit charged an ended attempt that metering had not",
      );
    }
  }
  msg.ack();
}
