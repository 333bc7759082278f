/**
 * The message census of `--count`: every message a tap saw on nats-server during a burst,
 * sorted into kinds (requests to a service, KV reads and writes, stream publishes,
 * consumer deliveries and acks, watch deliveries, core events, replies), with the service
 * that sent it and the one that received or answered it. Pure: the tap
 * (`ours/nats-tap.ts`) records, this file classifies and counts.
 */
import type { ResultTable } from "./scenario.js";

/** One message as the tap saw it. */
export interface TappedMessage {
  /** Monotonic ms (`clock.ts`) when the tap received it. */
  atMs: number;
  /** The tap's phase when it arrived (0 before the first mark). */
  phase: number;
  subject: string;
  /** "" when none. */
  reply: string;
  bytes: number;
  /** The status code of a status message (heartbeat, flow control, pull status); 0 for none. */
  status: number;
  /** `Nats-Expected-Last-Subject-Sequence`: "0" on a KV create, the revision on an update. */
  expectedLastSeq: string | undefined;
  /** `KV-Operation` (DEL, PURGE) of a KV delete marker. */
  kvOperation: string | undefined;
  /** The body's start, kept for acks only (`+ACK`, `+WPI`, `-NAK`, `+TERM`). */
  ackBody: string;
  /** Job ids named in the subject or the body. */
  jobIds: string[];
  /** A JetStream API error in the body (`err_code`, or the status code), as `"10071"`; "" for none. */
  error: string;
}

/** One client connection as nats-server's /connz listed it. */
export interface ConnectionInfo {
  cid: number;
  name: string;
  inMsgs: number;
  outMsgs: number;
  subscriptions: Array<{ subject: string; queue: string | undefined }>;
}

export const KINDS = [
  "request to a service",
  "KV read",
  "KV write",
  "stream publish",
  "JetStream API",
  "pull request",
  "consumer delivery",
  "watch delivery",
  "ack",
  "core event",
  "status",
  "reply",
  "other",
] as const;
export type Kind = (typeof KINDS)[number];

/** Kinds whose message is a request that waits for its reply: one round trip each. */
export const ROUND_TRIP_KINDS: ReadonlySet<Kind> = new Set([
  "request to a service",
  "KV read",
  "KV write",
  "stream publish",
  "JetStream API",
]);
/** Kinds that store something in JetStream (a KV write is a stream publish to the bucket's stream). */
export const DURABLE_KINDS: ReadonlySet<Kind> = new Set(["KV write", "stream publish"]);

export interface Classified {
  kind: Kind;
  detail: string;
  from: string;
  to: string;
}

/** What a reply says of its request: done, or refused by JetStream. */
export function outcomeOf(error: string): string {
  if (error === "") return "";
  if (error === "10071") return "refused: wrong last sequence";
  if (error === "10037" || error === "404") return "not found";
  return `error ${error}`;
}

/** Durable consumers by name, and the service that consumes each. */
const DURABLE_OWNERS: Record<string, string> = {
  scheduler: "scheduler",
  "billing-ledger-audit": "billing",
  "billing-metering": "billing",
  "webhook-events": "webhooks",
  "webhook-deliveries": "webhooks",
};
/** Streams that are not KV buckets, by the start of their subjects. */
const STREAM_SUBJECTS: Array<[prefix: string, stream: string]> = [
  ["cjs.metering.", "CJS_METERING"],
  ["cjs.logs.", "CJS_LOGS"],
  ["cjs.logdrops.", "CJS_LOGS"],
  ["cjs.webhook-deliveries.", "CJS_WEBHOOK_DELIVERIES"],
];
export const SERVER = "nats-server";
const ID_TOKEN = /^(job|nod)_[0-9A-Za-z]{20}$/;

/** A connection name as a row of the census: the agents are one row. */
export function serviceOf(connectionName: string): string {
  if (connectionName.startsWith("cjs-agent ")) return "agents";
  if (connectionName.startsWith("cjs-")) return connectionName.slice("cjs-".length);
  return connectionName === "" ? "?" : connectionName;
}

function matches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let index = 0; index < p.length; index++) {
    if (p[index] === ">") return s.length > index;
    if (index >= s.length || (p[index] !== "*" && p[index] !== s[index])) return false;
  }
  return p.length === s.length;
}

/** The 12-character prefix nats.js's NUID gives every inbox and ordered-consumer name of one process. */
function processPrefix(nuidish: string): string {
  return nuidish.slice(0, 12);
}

/**
 * Who owns what: inboxes (the replies and pull deliveries they receive), ordered consumers
 * (their names carry the NUID prefix of the process that made them) and the subjects
 * services listen on. Built from /connz snapshots; the union of all of them, since
 * subscriptions come and go.
 */
export class Owners {
  private readonly exact = new Map<string, string>();
  private readonly wildcardInboxes = new Map<string, string>();
  private readonly byProcess = new Map<string, Set<string>>();
  private readonly listeners: Array<{ pattern: string; name: string }> = [];
  private readonly toCache = new Map<string, string>();

  constructor(
    connections: readonly ConnectionInfo[],
    readonly ignored: ReadonlySet<string>,
  ) {
    const seen = new Set<string>();
    for (const { name, subscriptions } of connections) {
      const service = serviceOf(name);
      for (const { subject } of subscriptions) {
        if (subject.startsWith("_INBOX.")) {
          const rest = subject.slice("_INBOX.".length);
          if (subject.endsWith(".*")) this.wildcardInboxes.set(subject.slice(0, -1), service);
          else this.exact.set(subject, service);
          const names = this.byProcess.get(processPrefix(rest)) ?? new Set<string>();
          names.add(service);
          this.byProcess.set(processPrefix(rest), names);
        } else if (!seen.has(`${service} ${subject}`)) {
          seen.add(`${service} ${subject}`);
          this.listeners.push({ pattern: subject, name: service });
        }
      }
    }
  }

  /** The service whose connection receives messages sent to `inbox`. */
  ofInbox(inbox: string): string {
    const exact = this.exact.get(inbox);
    if (exact) return exact;
    const cut = inbox.lastIndexOf(".");
    const wildcard = cut > 0 ? this.wildcardInboxes.get(inbox.slice(0, cut + 1)) : undefined;
    if (wildcard) return wildcard;
    return inbox.startsWith("_INBOX.") ? this.ofProcess(inbox.slice("_INBOX.".length)) : "?";
  }

  /** The service that consumes from `consumer`: a durable one by its name, an ordered one by its NUID. */
  ofConsumer(consumer: string): string {
    const durable = DURABLE_OWNERS[consumer];
    if (durable) return durable;
    return consumer.startsWith("oc_") ? this.ofProcess(consumer.slice(3)) : "?";
  }

  /** The services listening on `subject` (queue groups included), as one label. */
  listenersOf(subject: string): string {
    const key = subject
      .split(".")
      .map((token) => (ID_TOKEN.test(token) ? `<${token.slice(0, 3)}>` : token))
      .join(".");
    let found = this.toCache.get(key);
    if (found === undefined) {
      const names = [
        ...new Set(this.listeners.filter(({ pattern }) => matches(pattern, subject)).map(({ name }) => name)),
      ].filter((name) => !this.ignored.has(name));
      found = names.length === 0 ? "(none seen)" : names.sort().join(", ");
      this.toCache.set(key, found);
    }
    return found;
  }

  private ofProcess(nuidish: string): string {
    const names = [...(this.byProcess.get(processPrefix(nuidish)) ?? [])].filter((name) => !this.ignored.has(name));
    if (names.length === 1) return names[0]!;
    return names.length === 0 ? "?" : names.includes("agents") ? "agents" : names.sort().join("|");
  }
}

/** `$JS.ACK.<stream>.<consumer>.…`, or the longer form with domain and account hash. */
function ackTarget(subject: string): { stream: string; consumer: string } {
  const tokens = subject.split(".");
  // v1: $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending> (9 tokens); v2 adds domain and account hash (and a random token).
  return tokens.length >= 11
    ? { stream: tokens[4]!, consumer: tokens[5]! }
    : { stream: tokens[2]!, consumer: tokens[3]! };
}

function consumerLabel(stream: string, consumer: string): string {
  return consumer.startsWith("oc_") ? `watch of ${stream.replace(/^KV_/, "")}` : `${consumer} on ${stream}`;
}

function ackKind(body: string): string {
  if (body === "" || body.startsWith("+ACK")) return "ack";
  if (body.startsWith("+WPI")) return "in progress";
  if (body.startsWith("-NAK")) return "nak";
  if (body.startsWith("+TERM")) return "term";
  if (body.startsWith("+NXT")) return "ack, next";
  return body.slice(0, 8);
}

/** The answering service of a `cjs.` request, by the second token of its subject. */
const ANSWERED_BY: Record<string, string> = {
  scheduler: "scheduler",
  registry: "node-registry",
  logrelay: "log-relay",
  billing: "billing",
  webhooks: "webhooks",
  nodeplane: "gateway",
};

/**
 * Sorts messages in the order the tap saw them, pairing each reply with its request (by the
 * request's unique reply subject), so a reply is counted under what it answers.
 */
export class Classifier {
  private readonly pending = new Map<string, Classified & { index: number }>();
  /** Requests whose reply said they failed, by the index `classify` was given, with why. */
  readonly failed = new Map<number, string>();

  constructor(private readonly owners: Owners) {}

  /** Classifies the `index`th message; call in the order the tap saw them. */
  classify(message: TappedMessage, index = 0): Classified & { answers?: Classified } {
    const { subject, reply } = message;
    const owners = this.owners;
    const request = (kind: Kind, detail: string, to: string): Classified => {
      const from = reply ? owners.ofInbox(reply) : "?";
      if (reply) this.pending.set(reply, { kind, detail, from, to, index });
      return { kind, detail, from, to };
    };

    if (reply.startsWith("$JS.ACK.")) {
      const { stream, consumer } = ackTarget(reply);
      const kind: Kind = consumer.startsWith("oc_") ? "watch delivery" : "consumer delivery";
      return { kind, detail: consumerLabel(stream, consumer), from: SERVER, to: owners.ofConsumer(consumer) };
    }
    if (subject.startsWith("$JS.ACK.")) {
      const { stream, consumer } = ackTarget(subject);
      return {
        kind: "ack",
        detail: `${consumerLabel(stream, consumer)}: ${ackKind(message.ackBody)}`,
        from: owners.ofConsumer(consumer),
        to: SERVER,
      };
    }
    if (subject.startsWith("$JS.FC.")) {
      const consumer = subject.split(".")[3] ?? "";
      return { kind: "status", detail: "flow control answer", from: owners.ofConsumer(consumer), to: SERVER };
    }
    if (subject.startsWith("$JS.API.")) {
      const tokens = subject.split(".").slice(2);
      const verb = tokens.slice(0, 2).join(".");
      if (verb === "STREAM.MSG" || verb === "DIRECT.GET") {
        const stream = verb === "STREAM.MSG" ? (tokens[3] ?? "") : (tokens[2] ?? "");
        return stream.startsWith("KV_")
          ? request("KV read", stream.slice(3), SERVER)
          : request("JetStream API", `${verb} ${stream}`, SERVER);
      }
      if (verb === "CONSUMER.MSG") {
        const [stream = "", consumer = ""] = tokens.slice(3);
        return {
          kind: "pull request",
          detail: consumerLabel(stream, consumer),
          from: reply ? owners.ofInbox(reply) : "?",
          to: SERVER,
        };
      }
      // Every service probes each stream it uses every few seconds (its JetStream health): one row for them all.
      if (verb === "STREAM.INFO") return request("JetStream API", "STREAM.INFO (any stream)", SERVER);
      const operands = tokens.slice(2, 4).map((token) => (token.startsWith("oc_") ? "(ordered)" : token));
      return request("JetStream API", [verb, ...operands].join(" "), SERVER);
    }
    if (subject.startsWith("$KV.")) {
      const bucket = subject.split(".")[1] ?? "";
      const op = message.kvOperation
        ? message.kvOperation.toLowerCase()
        : message.expectedLastSeq === undefined
          ? "put"
          : message.expectedLastSeq === "0"
            ? "create"
            : "update (CAS)";
      return request("KV write", `${bucket} ${op}`, SERVER);
    }
    if (subject.startsWith("$O."))
      return request("stream publish", `object store ${subject.split(".")[1] ?? ""}`, SERVER);
    const stream = STREAM_SUBJECTS.find(([prefix]) => subject.startsWith(prefix));
    if (stream && reply) return request("stream publish", stream[1], SERVER);

    const answered = this.pending.get(subject);
    if (answered) {
      this.pending.delete(subject);
      const outcome = outcomeOf(message.error);
      if (outcome) this.failed.set(answered.index, outcome);
      return { kind: "reply", detail: `to ${answered.kind}`, from: answered.to, to: answered.from, answers: answered };
    }
    if (message.status !== 0) {
      const what =
        message.status === 100
          ? reply.startsWith("$JS.FC.")
            ? "flow control"
            : "idle heartbeat"
          : `status ${message.status}`;
      return { kind: "status", detail: what, from: SERVER, to: owners.ofInbox(subject) };
    }
    if (subject.startsWith("cjs.events.")) {
      const tokens = subject.split(".");
      return {
        kind: "core event",
        detail: `${tokens[2]} ${tokens[4] ?? ""}`.trim(),
        from: "scheduler",
        to: owners.listenersOf(subject),
      };
    }
    if (subject.startsWith("cjs.") && reply) {
      const answeredBy = ANSWERED_BY[subject.split(".")[1] ?? ""] ?? owners.listenersOf(subject);
      return request("request to a service", subject.slice("cjs.".length), answeredBy);
    }
    // Mostly answers to long polls sent before the tap started.
    if (subject.startsWith("_INBOX."))
      return { kind: "other", detail: "to an inbox, its request unseen", from: "?", to: owners.ofInbox(subject) };
    return {
      kind: "other",
      detail: subject.split(".").slice(0, 3).join("."),
      from: "?",
      to: owners.listenersOf(subject),
    };
  }
}

/** Counts by row (kind, detail, from, to), per phase. */
export interface CensusRow extends Classified {
  counts: number[];
}

export function takeCensus(messages: readonly TappedMessage[], owners: Owners, phases: number): CensusRow[] {
  const classifier = new Classifier(owners);
  const classified = messages.map((message, index) => classifier.classify(message, index));
  const rows = new Map<string, CensusRow>();
  classified.forEach((each, index) => {
    if (owners.ignored.has(each.from) || owners.ignored.has(each.to)) return;
    const failure = classifier.failed.get(index);
    const detail = failure ? `${each.detail}, ${failure}` : each.detail;
    const key = `${each.kind}\u0000${detail}\u0000${each.from}\u0000${each.to}`;
    let row = rows.get(key);
    if (!row) {
      row = { kind: each.kind, detail, from: each.from, to: each.to, counts: new Array<number>(phases).fill(0) };
      rows.set(key, row);
    }
    const phase = messages[index]!.phase;
    row.counts[phase] = (row.counts[phase] ?? 0) + 1;
  });
  return [...rows.values()].sort(
    (a, b) =>
      KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) ||
      a.from.localeCompare(b.from) ||
      a.detail.localeCompare(b.detail) ||
      a.to.localeCompare(b.to),
  );
}

/** One job's messages in the order the tap saw them, with their classification. */
export interface TraceLine extends Classified {
  atMs: number;
}

/**
 * The messages about one job: those naming it in their subject or body, and the requests
 * whose reply names it (its submit). Allocation records list every attempt on a node, so
 * of those only the first write naming the job (its reservation) is kept.
 */
export function traceJob(messages: readonly TappedMessage[], owners: Owners, jobId: string): TraceLine[] {
  const classifier = new Classifier(owners);
  const requests = new Map<string, { message: TappedMessage; classified: Classified }>();
  const lines: TraceLine[] = [];
  let reservationSeen = false;
  messages.forEach((message, index) => {
    const classified = classifier.classify(message, index);
    if (owners.ignored.has(classified.from) || owners.ignored.has(classified.to)) return;
    if (message.reply && classified.kind !== "consumer delivery" && classified.kind !== "watch delivery")
      requests.set(message.reply, { message, classified });
    const names = message.jobIds.includes(jobId) || message.subject.includes(jobId);
    if (!names) return;
    const aboutAllocations =
      classified.detail.startsWith("cjs_allocations") || classified.detail === "watch of cjs_allocations";
    if (aboutAllocations) {
      if (reservationSeen || classified.kind !== "KV write") return;
      reservationSeen = true;
    }
    let line: Classified = classified;
    if (classified.answers) {
      const asked = requests.get(message.subject);
      if (asked && !asked.message.jobIds.includes(jobId) && !asked.message.subject.includes(jobId))
        lines.push({ atMs: asked.message.atMs, ...asked.classified });
      const outcome = outcomeOf(message.error);
      line = { ...classified, detail: `to ${classified.answers.detail}${outcome ? `: ${outcome}` : ""}` };
    }
    lines.push({ atMs: message.atMs, kind: line.kind, detail: line.detail, from: line.from, to: line.to });
  });
  return lines.sort((a, b) => a.atMs - b.atMs);
}

/** What the tap recorded, as the census reads it (`ours/nats-tap.ts`). */
export interface CensusInput {
  messages: readonly TappedMessage[];
  /** /connz at the start, at the mark that ended the idle phase, and at the stop. */
  snapshots: ReadonlyArray<{ atMs: number; connections: ConnectionInfo[] }>;
  /** Connection names whose messages are left out (the tap's own). */
  ignored: ReadonlySet<string>;
  jobs: number;
  /** A job of the burst whose messages are listed in order. */
  sampleJobId: string | undefined;
}

export interface Census {
  rows: CensusRow[];
  idleSeconds: number;
  burstSeconds: number;
  /** Per job, during the burst phase. */
  roundTrips: number;
  durableWrites: number;
  /** Messages clients published, and messages nats-server delivered to clients, by service; [idle, burst]. */
  connections: Map<string, { published: [number, number]; received: [number, number] }>;
  trace: TraceLine[];
}

function connectionDeltas(
  before: readonly ConnectionInfo[],
  after: readonly ConnectionInfo[],
  ignored: ReadonlySet<string>,
): Map<string, { published: number; received: number }> {
  const start = new Map(before.map((connection) => [connection.cid, connection]));
  const out = new Map<string, { published: number; received: number }>();
  for (const connection of after) {
    const service = serviceOf(connection.name);
    if (ignored.has(service)) continue;
    const earlier = start.get(connection.cid);
    const entry = out.get(service) ?? { published: 0, received: 0 };
    entry.published += connection.inMsgs - (earlier?.inMsgs ?? 0);
    entry.received += connection.outMsgs - (earlier?.outMsgs ?? 0);
    out.set(service, entry);
  }
  return out;
}

/** Classifies and counts a recording of two phases: idle (before the mark), then the burst. */
export function takeCensusOf(input: CensusInput): Census {
  const [start, mark, end] = input.snapshots;
  if (!start || !mark || !end) throw new Error("the census needs three /connz snapshots: start, mark, stop");
  const owners = new Owners(
    input.snapshots.flatMap((snapshot) => snapshot.connections),
    input.ignored,
  );
  const rows = takeCensus(input.messages, owners, 2);
  const perJob = (kinds: ReadonlySet<Kind>) =>
    rows.filter((row) => kinds.has(row.kind)).reduce((sum, row) => sum + (row.counts[1] ?? 0), 0) / input.jobs;
  const idle = connectionDeltas(start.connections, mark.connections, input.ignored);
  const burst = connectionDeltas(mark.connections, end.connections, input.ignored);
  const connections = new Map<string, { published: [number, number]; received: [number, number] }>();
  for (const service of new Set([...idle.keys(), ...burst.keys()])) {
    const a = idle.get(service) ?? { published: 0, received: 0 };
    const b = burst.get(service) ?? { published: 0, received: 0 };
    connections.set(service, { published: [a.published, b.published], received: [a.received, b.received] });
  }
  return {
    rows,
    idleSeconds: (mark.atMs - start.atMs) / 1000,
    burstSeconds: (end.atMs - mark.atMs) / 1000,
    roundTrips: perJob(ROUND_TRIP_KINDS),
    durableWrites: perJob(DURABLE_KINDS),
    connections,
    trace: input.sampleJobId ? traceJob(input.messages, owners, input.sampleJobId) : [],
  };
}

function fixed(value: number): string {
  if (value === 0) return "0";
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** The census as three tables: by kind and service, by connection, and one job's messages in order. */
export function censusTables(
  census: Census,
  title: string,
  jobs: number,
  notes: readonly string[],
  cpuPer1000?: ReadonlyMap<string, number>,
): ResultTable[] {
  const { rows, idleSeconds, burstSeconds } = census;
  const byKind = rows
    .filter((row) => (row.counts[1] ?? 0) > 0 || (row.counts[0] ?? 0) > 0)
    .map((row) => [
      row.kind,
      row.detail,
      row.from,
      row.to,
      fixed((row.counts[1] ?? 0) / jobs),
      fixed((row.counts[0] ?? 0) / idleSeconds),
    ]);
  const perService = new Map<string, { trips: number; durable: number }>();
  for (const row of rows) {
    if (!ROUND_TRIP_KINDS.has(row.kind)) continue;
    const entry = perService.get(row.from) ?? { trips: 0, durable: 0 };
    entry.trips += row.counts[1] ?? 0;
    if (DURABLE_KINDS.has(row.kind)) entry.durable += row.counts[1] ?? 0;
    perService.set(row.from, entry);
  }
  const services = [...census.connections].sort((a, b) => a[0].localeCompare(b[0]));
  const total = services.reduce(
    (sum, [, counts]) => ({
      published: sum.published + counts.published[1],
      received: sum.received + counts.received[1],
      idleP: sum.idleP + counts.published[0],
      idleR: sum.idleR + counts.received[0],
    }),
    { published: 0, received: 0, idleP: 0, idleR: 0 },
  );
  const start = census.trace[0]?.atMs ?? 0;
  return [
    {
      title: `(count) ${title}: messages per job, by kind, sender and receiver`,
      columns: ["kind", "what", "from", "to", "per job", "idle per s"],
      rows: byKind,
      notes: [
        ...notes,
        `a burst of ${jobs} jobs counted over ${burstSeconds.toFixed(1)} s (from the first submit until every consumer had acknowledged everything); "idle per s" is the same system over ${idleSeconds.toFixed(1)} s before it, with the nodes long-polling: what runs whether or not jobs move`,
        `per job: ${fixed(census.roundTrips)} round trips (requests to a service, KV reads and writes, stream publishes, other JetStream API calls), of which ${fixed(census.durableWrites)} durable writes (KV writes and stream publishes)`,
        `round trips per job by sender: ${[...perService]
          .sort((a, b) => b[1].trips - a[1].trips)
          .map(
            ([service, { trips, durable }]) => `${service} ${fixed(trips / jobs)} (${fixed(durable / jobs)} durable)`,
          )
          .join(", ")}`,
        "replies are counted under what they answer; a request to a service encloses the round trips its handler makes",
        "not seen here: the submits themselves (HTTP from the bench to the gateway), and JetStream's work inside nats-server (storing; no replication on one server)",
        ...(cpuPer1000
          ? [
              `CPU ms per 1000 jobs during this burst (first submit to last completion, with the tap listening): ${[...cpuPer1000].map(([name, ms]) => `${name} ${Math.round(ms)}`).join(", ")}`,
            ]
          : []),
      ],
    },
    {
      title: `(count) ${title}: messages through nats-server per job, by process (from /connz)`,
      columns: ["process", "published per job", "received per job", "idle published per s", "idle received per s"],
      rows: [
        ...services.map(([service, counts]) => [
          service,
          fixed(counts.published[1] / jobs),
          fixed(counts.received[1] / jobs),
          fixed(counts.published[0] / idleSeconds),
          fixed(counts.received[0] / idleSeconds),
        ]),
        [
          "all",
          fixed(total.published / jobs),
          fixed(total.received / jobs),
          fixed(total.idleP / idleSeconds),
          fixed(total.idleR / idleSeconds),
        ],
      ],
      notes: [
        "published: messages the process's connection sent to nats-server (requests, publishes, acks, replies); received: messages nats-server delivered to it (replies, deliveries, events, requests it serves); JetStream's replies and deliveries are the server's own publishes, so they show only as received",
        `through nats-server per job: ${fixed((total.published + total.received) / jobs)} messages in or out of a client connection`,
      ],
    },
    {
      title: `(count) ${title}: one job's messages in the order the tap saw them`,
      columns: ["ms", "kind", "what", "from", "to"],
      rows: census.trace.map((line) => [(line.atMs - start).toFixed(1), line.kind, line.detail, line.from, line.to]),
      notes: [
        "messages that name the job in their subject or body, and the requests whose reply names it (the submit); of the node's allocation record only the write that reserved the job",
        "reads of the job's record by other work (polls of its node for other jobs, the reconciler) show here too: they name the job",
      ],
    },
  ];
}
