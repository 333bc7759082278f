import { Worker } from "node:worker_threads";
import type { Cleanup } from "./cleanup.js";

/** What the noisy tenant acts with: plain data, so a worker thread can build its own clients. */
export interface NoisyTenantSetup {
  gatewayUrl: string;
  appId: string;
  /** Its user's API key: submits and log streams. */
  userApiKey: string;
  /** The job whose log its streams open. */
  streamJobId: string;
  /** Its nodes (over HTTP), each holding a job it pushes log lines of. */
  nodes: Array<{ apiKey: string; jobId: string }>;
}

/** Its pressure: workers opening and holding log streams, and workers submitting as fast as answered. */
export const NOISY_STREAM_OPENERS = 4;
export const NOISY_SUBMITTERS = 4;
/** …and loops heartbeating as one of its nodes, each as fast as answered. */
export const NOISY_HEARTBEATERS = 2;

/** What the noisy tenant was answered while it pressed on every limit, by outcome. */
export type Outcomes = Map<string, number>;

/** The worker's messages to the bench: one answer counted, or a press ended (its streams closed). */
export type FromNoisyTenant = { type: "answer"; outcome: string } | { type: "stopped" };
/** The bench's messages to the worker: press on, or stop pressing. */
export type ToNoisyTenant = { type: "press" } | { type: "stop" };

export interface NoisyTenant {
  /** Every answer it got so far, over all presses. */
  readonly outcomes: Outcomes;
  /** Presses on every limit until `stop` aborts; resolves once it has stopped and closed its streams. */
  press(stop: AbortSignal): Promise<void>;
  /** Ends its thread. */
  close(): Promise<void>;
}

/**
 * The noisy tenant as a client of its own, on a worker thread (`noisy-tenant-worker.ts`):
 * its requests are built, sent and read on another event loop than the quiet tenant's, as
 * two tenants' clients are in life. On the bench's own thread, its JSON and sockets would
 * delay the quiet tenant's timings inside the bench, and the scenario would count the load
 * generator's queue as the service's.
 */
export function startNoisyTenant(setup: NoisyTenantSetup, cleanup: Cleanup): NoisyTenant {
  const worker = new Worker(new URL("./noisy-tenant-worker.ts", import.meta.url), { workerData: setup });
  const close = cleanup.add("noisy tenant's thread", () => worker.terminate().then(() => undefined));
  const outcomes: Outcomes = new Map();
  let broken: Error | undefined;
  let pending: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const fail = (error: Error) => {
    broken ??= error;
    pending?.reject(broken);
    pending = undefined;
  };
  worker.on("message", (message: FromNoisyTenant) => {
    if (message.type === "answer") outcomes.set(message.outcome, (outcomes.get(message.outcome) ?? 0) + 1);
    else {
      pending?.resolve();
      pending = undefined;
    }
  });
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the noisy tenant's thread ended (exit code ${code})`)));
  const send = (message: ToNoisyTenant) => worker.postMessage(message);
  return {
    outcomes,
    press(stop) {
      return new Promise<void>((resolve, reject) => {
        if (broken) return reject(broken);
        pending = { resolve, reject };
        send({ type: "press" });
        if (stop.aborted) send({ type: "stop" });
        else stop.addEventListener("abort", () => send({ type: "stop" }), { once: true });
      });
    },
    close,
  };
}
