import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type Msg, type NatsConnection } from "@nats-io/transport-node";
import { monotonicMs } from "../clock.js";
import type { ConnectionInfo, TappedMessage } from "../message-census.js";

/** The tap's own connection name: its messages are left out of the census. */
export const TAP_NAME = "bench-census";

/**
 * Everything a client can send or receive, except `$JS.EVENT.>`: a subscriber there would
 * make the server publish an API advisory for every JetStream request (it sends them only
 * when someone listens). Push and pull deliveries reach the tap through their inboxes.
 */
const TAPPED = ["_INBOX.>", "cjs.>", "$KV.>", "$O.>", "$JS.API.>", "$JS.ACK.>", "$JS.FC.>"];
/** Bodies longer than this are not searched for job ids. */
const SEARCHED_BYTES = 64 * 1024;
const JOB_ID = /job_[0-9A-Za-z]{20}/g;
const API_ERROR_CODE = /"err_code":(\d+)/;
const API_STATUS = /"error":\{"code":(\d+)/;

/** /connz as the census needs it: every client connection with its counters and subscriptions. */
export interface ConnzSnapshot {
  atMs: number;
  connections: ConnectionInfo[];
}

export interface TapRecording {
  messages: TappedMessage[];
  /** Snapshots at the start, at each mark, and at the stop. */
  snapshots: ConnzSnapshot[];
  marks: Array<{ name: string; atMs: number }>;
  /** nats-server's count of slow consumers went up meanwhile: the tap (or another client) may have missed messages. */
  slowConsumers: number;
}

export interface NatsTap {
  /** The tap's own connection (for settle checks, whose messages the census leaves out). */
  readonly jsm: JetStreamManager;
  /** Starts the next phase: a /connz snapshot, and messages from now on count in it. */
  mark(name: string): Promise<void>;
  stop(): Promise<TapRecording>;
}

interface RawConnz {
  connections: Array<{
    cid: number;
    name?: string;
    in_msgs: number;
    out_msgs: number;
    subscriptions_list_detail?: Array<{ subject: string; qgroup?: string }>;
  }>;
}

async function connz(monitorUrl: string): Promise<ConnzSnapshot> {
  const response = await fetch(`${monitorUrl}/connz?subs=detail&limit=100000`);
  if (!response.ok) throw new Error(`${monitorUrl}/connz answered ${response.status}`);
  const body = (await response.json()) as RawConnz;
  return {
    atMs: monotonicMs(),
    connections: body.connections.map((connection) => ({
      cid: connection.cid,
      name: connection.name ?? "",
      inMsgs: connection.in_msgs,
      outMsgs: connection.out_msgs,
      subscriptions: (connection.subscriptions_list_detail ?? []).map(({ subject, qgroup }) => ({
        subject,
        queue: qgroup,
      })),
    })),
  };
}

async function slowConsumers(monitorUrl: string): Promise<number> {
  const response = await fetch(`${monitorUrl}/varz`);
  return ((await response.json()) as { slow_consumers: number }).slow_consumers;
}

const decoder = new TextDecoder();

/** The JetStream API error a reply carries (its `err_code`, else its status code), or "". */
function apiError(text: string): string {
  if (!text.startsWith("{") || !text.includes('"error":')) return "";
  return API_ERROR_CODE.exec(text)?.[1] ?? API_STATUS.exec(text)?.[1] ?? "error";
}

function record(msg: Msg, phase: number): TappedMessage {
  const { subject, data } = msg;
  const reply = msg.reply ?? "";
  const text = data.length > 0 && data.length <= SEARCHED_BYTES ? decoder.decode(data) : "";
  const ids = new Set<string>(subject.match(JOB_ID) ?? []);
  for (const id of text.match(JOB_ID) ?? []) ids.add(id);
  const headers = msg.headers;
  return {
    atMs: monotonicMs(),
    phase,
    subject,
    reply,
    bytes: data.length,
    status: headers?.code ?? 0,
    expectedLastSeq: headers?.get("Nats-Expected-Last-Subject-Sequence") || undefined,
    kvOperation: headers?.get("KV-Operation") || undefined,
    ackBody: subject.startsWith("$JS.ACK.") ? text.slice(0, 8) : "",
    jobIds: [...ids],
    error: headers?.code && headers.code >= 400 ? String(headers.code) : apiError(text),
  };
}

/**
 * A subscriber on every subject a client can use, on its own connection, recording each
 * message (subject, reply, size, the job ids it names), and /connz snapshots at each mark,
 * so the census can tell which service sent and received what. It sees core messages,
 * not JetStream's own work inside the server (storing, replication).
 */
export async function startNatsTap(natsUrl: string, monitorUrl: string): Promise<NatsTap> {
  const nc: NatsConnection = await connect({ servers: natsUrl, name: TAP_NAME, noAsyncTraces: true });
  const messages: TappedMessage[] = [];
  const snapshots: ConnzSnapshot[] = [];
  const marks: Array<{ name: string; atMs: number }> = [];
  let phase = 0;
  let lost: string | undefined;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "slowConsumer" || status.type === "error")
        lost ??= `the tap's connection reported ${status.type}`;
    }
  })();
  const subscriptions = TAPPED.map((subject) =>
    nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error) lost ??= error.message;
        else messages.push(record(msg, phase));
      },
    }),
  );
  await nc.flush();
  const slowAtStart = await slowConsumers(monitorUrl);
  snapshots.push(await connz(monitorUrl));
  const jsm = await jetstreamManager(nc);
  return {
    jsm,
    async mark(name) {
      await nc.flush();
      snapshots.push(await connz(monitorUrl));
      marks.push({ name, atMs: monotonicMs() });
      phase += 1;
    },
    async stop() {
      await nc.flush();
      snapshots.push(await connz(monitorUrl));
      for (const subscription of subscriptions) subscription.unsubscribe();
      const slow = (await slowConsumers(monitorUrl)) - slowAtStart;
      await nc.close();
      if (lost) throw new Error(`the message census is incomplete: ${lost}`);
      return { messages, snapshots, marks, slowConsumers: slow };
    },
  };
}
