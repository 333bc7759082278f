/**
 * The noisy tenant's client, on a worker thread of its own (see `startNoisyTenant`): on
 * each "press" it presses on every limit at once until "stop", reporting each answer.
 */
import { get } from "node:http";
import { parentPort, workerData } from "node:worker_threads";
import { httpNodePlane } from "../../clients/agent/index.js";
import { pooledFetch } from "../../clients/agent/pooled-fetch.js";
import { loadClient } from "./ours/load-client.js";
import { logStreamPath } from "../../shared/contract/index.js";
import { errorCode } from "./load.js";
import {
  type FromNoisyTenant,
  NOISY_HEARTBEATERS,
  NOISY_STREAM_OPENERS,
  NOISY_SUBMITTERS,
  type NoisyTenantSetup,
  type ToNoisyTenant,
} from "./noisy-tenant.js";

const LONG_LINE = "z".repeat(10_000);

const port = parentPort!;
const setup = workerData as NoisyTenantSetup;
const user = loadClient({ baseUrl: setup.gatewayUrl, appId: setup.appId, apiKey: setup.userApiKey });
const nodes = setup.nodes.map(({ apiKey, jobId }) => ({
  plane: httpNodePlane({ gatewayUrl: setup.gatewayUrl, appId: setup.appId, fetch: pooledFetch().fetch }).withNodeKey(
    apiKey,
  ),
  jobId,
}));

const tell = (message: FromNoisyTenant) => port.postMessage(message);
const count = (outcome: string) => tell({ type: "answer", outcome });

/** Waits `ms`, or less if `stop` aborts first. */
function pause(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    stop.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** How long a refusal asks to wait (`Retry-After`), else a second. */
function retryAfterMs(error: unknown): number {
  const seconds = (error as { retryAfterSeconds?: number } | null)?.retryAfterSeconds;
  return seconds === undefined ? 1_000 : seconds * 1_000;
}

/**
 * The noisy tenant at every limit at once, until `stop` aborts, as a client that spends
 * each budget to the full and comes back as soon as it is told it may: workers opening
 * log streams of its job and holding them, workers submitting as fast as they are
 * answered, nodes pushing 1 MB batches of log lines, a node heartbeating in loops; each refusal waits its `Retry-After`
 * (or a second), then tries again.
 */
async function pressOn(stop: AbortSignal): Promise<void> {
  const held: Array<() => void> = [];
  const headers = { "x-app-id": setup.appId, "x-api-key": setup.userApiKey };
  const openers = Array.from({ length: NOISY_STREAM_OPENERS }, async () => {
    while (!stop.aborted) {
      const answer = await new Promise<{ status: number; retryAfter: number }>((resolve) => {
        const request = get(
          `${setup.gatewayUrl}${logStreamPath(setup.streamJobId)}`,
          { headers, agent: false },
          (response) => {
            resolve({ status: response.statusCode ?? 0, retryAfter: Number(response.headers["retry-after"] ?? 1) });
            if (response.statusCode === 200) held.push(() => request.destroy());
            else response.resume();
          },
        );
        request.on("error", () => resolve({ status: 0, retryAfter: 1 }));
      });
      count(`log stream ${answer.status}`);
      if (answer.status !== 200) await pause(answer.retryAfter * 1_000, stop);
    }
  });
  const submitters = Array.from({ length: NOISY_SUBMITTERS }, async () => {
    while (!stop.aborted) {
      try {
        await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "noisy-queue" });
        count("submit ok");
      } catch (error) {
        count(`submit ${errorCode(error)}`);
        await pause(retryAfterMs(error), stop);
      }
    }
  });
  // The first node alone until its hour is used up, then the second, which uses up the business's day.
  let firstRefused: () => void = () => undefined;
  const untilFirstRefused = new Promise<void>((resolve) => {
    firstRefused = resolve;
  });
  const pushers = nodes.map(async ({ plane, jobId }, nodeIndex) => {
    if (nodeIndex > 0)
      await Promise.race([untilFirstRefused, new Promise((resolve) => stop.addEventListener("abort", resolve))]);
    for (let seq = 1; !stop.aborted; seq += 90) {
      const lines = Array.from({ length: 90 }, (_, index) => ({
        seq: seq + index,
        stream: "stdout" as const,
        line: LONG_LINE,
        ts: new Date().toISOString(),
      }));
      try {
        await plane.pushLogs({ job_id: jobId, attempt: 1, lines });
        count("log push ok");
      } catch (error) {
        const limit = (error as { details?: { limit?: unknown } }).details?.limit;
        count(`log push ${errorCode(error)}${typeof limit === "string" ? ` ${limit}` : ""}`);
        // Only its hour: after any other refusal (a 429, a 503) the two would push side by side and use up the day before either's hour.
        if (nodeIndex === 0 && limit === "node_hour") firstRefused();
        await pause(retryAfterMs(error), stop);
      }
    }
  });
  // Its first node also heartbeats from NOISY_HEARTBEATERS loops at once, far past what an agent sends: its budget of control calls.
  const heartbeaters = Array.from({ length: NOISY_HEARTBEATERS }, async () => {
    while (!stop.aborted) {
      try {
        await nodes[0]!.plane.heartbeat({ running: [] });
        count("heartbeat ok");
      } catch (error) {
        count(`heartbeat ${errorCode(error)}`);
        await pause(retryAfterMs(error), stop);
      }
    }
  });
  await Promise.all([...openers, ...submitters, ...pushers, ...heartbeaters]);
  for (const close of held) close();
}

let pressing: AbortController | undefined;
port.on("message", (message: ToNoisyTenant) => {
  if (message.type === "stop") {
    pressing?.abort();
    return;
  }
  const stop = new AbortController();
  pressing = stop;
  void pressOn(stop.signal).then(() => tell({ type: "stopped" }));
});
