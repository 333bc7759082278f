import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { BUCKETS, CONSUMERS, STREAMS, kvStreams } from "../../../shared/nats/index.js";
import { type Census, Classifier, Owners, takeCensusOf, type TappedMessage } from "../message-census.js";
import type { ConnzSnapshot } from "./nats-tap.js";
import type { Progress } from "../progress.js";
import { startNatsTap, TAP_NAME } from "./nats-tap.js";

/** How long the tap listens before the burst: what the system does with nothing to do. */
const IDLE_MS = 5_000;
/** The ledger audit holds a charged attempt's revision for its grace (60 s by default) before it checks it. */
const SETTLE_TIMEOUT_MS = 120_000;
const SETTLE_POLL_MS = 500;

/** The durable consumers every job's messages go through; the burst has ended when they have nothing left. */
const SETTLED_CONSUMERS = [
  [kvStreams.name(BUCKETS.jobs), CONSUMERS.billingLedgerAudit],
  [STREAMS.metering, CONSUMERS.billingMetering],
] as const;

async function waitUntilConsumed(jsm: JetStreamManager, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (Date.now() < deadline && !signal.aborted) {
    const infos = await Promise.all(
      SETTLED_CONSUMERS.map(([stream, consumer]) => jsm.consumers.info(stream, consumer).catch(() => null)),
    );
    if (infos.every((info) => info === null || (info.num_pending === 0 && info.num_ack_pending === 0))) return true;
    await sleep(SETTLE_POLL_MS);
  }
  return false;
}

export interface CensusBurstOptions {
  natsUrl: string;
  monitorUrl: string;
  jobs: number;
  progress: Progress;
  signal: AbortSignal;
  /** Runs the burst; resolves with the job ids in submit order and the CPU each process used, or undefined when it failed. */
  burst: () => Promise<{ ids: string[]; cpuPer1000: Map<string, number> } | undefined>;
  /** Where to write every message the tap saw, classified, one JSON object a line. */
  dumpFile: string | undefined;
}

/** Every tapped message with its classification, for reading by hand (`BENCH_CENSUS_DUMP`). */
async function dump(
  file: string,
  messages: readonly TappedMessage[],
  snapshots: readonly ConnzSnapshot[],
): Promise<void> {
  const owners = new Owners(
    snapshots.flatMap((snapshot) => snapshot.connections),
    new Set([TAP_NAME]),
  );
  const classifier = new Classifier(owners);
  const out = createWriteStream(file);
  for (const [index, message] of messages.entries()) {
    const { answers, ...classified } = classifier.classify(message, index);
    const line = { ...message, ...classified, answers: answers ? `${answers.kind} ${answers.detail}` : undefined };
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

/**
 * One unmeasured burst with a tap on nats-server: a few seconds idle, then the burst, until
 * every durable consumer of the job path has acknowledged everything. Returns the census,
 * or undefined when the burst failed.
 */
export async function countBurst(
  options: CensusBurstOptions,
): Promise<{ census: Census | undefined; cpuPer1000?: Map<string, number>; failure: string | undefined } | undefined> {
  const { progress } = options;
  // What earlier bursts left (metering, the ledger audit's held revisions) is done before the census starts.
  progress.update("census: waiting until the consumers have nothing left from before");
  const before = await connect({ servers: options.natsUrl, name: "bench-census-settle" });
  const settledBefore = await waitUntilConsumed(await jetstreamManager(before), options.signal).finally(() =>
    before.close(),
  );
  if (!settledBefore)
    return {
      census: undefined,
      failure: `the consumers still had messages ${SETTLE_TIMEOUT_MS / 1000} s after the earlier bursts`,
    };
  const tap = await startNatsTap(options.natsUrl, options.monitorUrl);
  let burst: { ids: string[]; cpuPer1000: Map<string, number> } | undefined;
  let settled = false;
  try {
    progress.update(`census: idle for ${IDLE_MS / 1000} s`);
    await sleep(IDLE_MS);
    await tap.mark("burst");
    burst = await options.burst();
    if (burst) {
      progress.update("census: waiting until every consumer has acknowledged everything");
      settled = await waitUntilConsumed(tap.jsm, options.signal);
    }
  } catch (error) {
    await tap.stop().catch(() => undefined);
    throw error;
  }
  const recording = await tap.stop();
  if (!burst) return undefined;
  const { ids } = burst;
  if (options.dumpFile) await dump(options.dumpFile, recording.messages, recording.snapshots);
  const census = takeCensusOf({
    messages: recording.messages,
    snapshots: recording.snapshots,
    ignored: new Set([TAP_NAME]),
    jobs: options.jobs,
    sampleJobId: ids[Math.floor(ids.length / 2)],
  });
  const failure =
    recording.slowConsumers > 0
      ? `nats-server counted ${recording.slowConsumers} slow consumer(s) during the census: messages may be missing`
      : settled
        ? undefined
        : `the consumers still had messages ${SETTLE_TIMEOUT_MS / 1000} s after the burst`;
  return { census, cpuPer1000: burst.cpuPer1000, failure };
}
