/**
 * Where a service's CPU time went during the bench's bursts, from the `.cpuprofile` that
 * `node --cpu-prof` writes (`--cpu-prof DIR`). Pure: reads a profile, keeps the samples
 * taken inside the given windows (on the machine's monotonic clock, which V8's profiler
 * and `clock.ts` share), and counts them by function, by file of ours and by bucket.
 */
import type { ResultTable } from "./scenario.js";

/** The parts of V8's profile format that are read here. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  /** Microseconds on the monotonic clock. */
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** Monotonic ms, start inclusive, end exclusive. */
export interface TimeWindow {
  startMs: number;
  endMs: number;
}

export interface ProfileSummary {
  /** Samples inside the windows, idle included. */
  samples: number;
  /** Samples in which the main thread was not idle: every share below is of these. */
  busy: number;
  sampleIntervalMs: number;
  /** Each busy sample in exactly one bucket (the innermost frame that says what the work is). */
  buckets: Map<string, number>;
  /** Busy samples by their innermost frame (self time). */
  self: Map<string, number>;
  /** Busy samples with the frame anywhere on their stack (inclusive), our code's and libraries' frames only. */
  inclusive: Map<string, number>;
  /** Busy samples with any frame of the file on their stack, for our own files. */
  ourFiles: Map<string, number>;
  /** Busy samples by the innermost frame of ours on the stack (the code that asked for the work), then bucket. */
  owners: Map<string, Map<string, number>>;
}

const NO_FRAME_OF_OURS = "(no frame of ours)";

type Source =
  | { kind: "ours"; file: string }
  | { kind: "lib"; pkg: string; file: string }
  | { kind: "node" }
  | { kind: "builtin" };

function sourceOf(url: string): Source {
  if (url === "") return { kind: "builtin" };
  if (url.startsWith("node:")) return { kind: "node" };
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "/node_modules/".length).split("/");
    const pkg = rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? "");
    return { kind: "lib", pkg, file: rest.slice(pkg.split("/").length).join("/") };
  }
  const ours = /\/((?:services|shared|clients)\/.+)$/.exec(url);
  if (ours?.[1]) return { kind: "ours", file: ours[1] };
  return { kind: "node" };
}

const PINO = new Set([
  "pino",
  "pino-std-serializers",
  "sonic-boom",
  "thread-stream",
  "fast-redact",
  "quick-format-unescaped",
  "on-exit-leak-free",
  "atomic-sleep",
  "safe-stable-stringify",
]);
const FASTIFY = new Set([
  "fastify",
  "find-my-way",
  "light-my-request",
  "avvio",
  "fast-json-stringify",
  "secure-json-parse",
  "fast-uri",
  "ajv",
  "toad-cache",
  "fast-querystring",
  "proxy-addr",
  "content-type",
  "process-warning",
  "abstract-logging",
  "rfdc",
  "fastq",
]);
const NATS_PARSE = new Set([
  "processMsg",
  "processError",
  "processPing",
  "processPong",
  "processInfo",
  "push",
  "dispatchStatus",
  "callback",
]);
const NATS_REQUEST = new Set(["request", "requestMany", "_resub"]);

/** The NATS client's part of a frame: socket I/O, parsing and dispatch, publishing, request/reply bookkeeping, JetStream/KV. */
function natsBucket(pkg: string, file: string, name: string): string {
  if (pkg === "@nats-io/jetstream" || pkg === "@nats-io/kv" || pkg === "@nats-io/obj")
    return "NATS client: JetStream and KV API";
  const base = file.slice(file.lastIndexOf("/") + 1);
  if (base === "node_transport.js" || base === "databuffer.js") return "NATS client: socket I/O and buffers";
  if (
    base === "parser.js" ||
    base === "denobuffer.js" ||
    base === "msg.js" ||
    base === "queued_iterator.js" ||
    base.includes("heartbeat")
  )
    return "NATS client: protocol parsing and dispatch";
  if (base === "headers.js")
    return name === "encode"
      ? "NATS client: publishing (protocol encoding)"
      : "NATS client: protocol parsing and dispatch";
  if (base === "protocol.js")
    return NATS_PARSE.has(name)
      ? "NATS client: protocol parsing and dispatch"
      : "NATS client: publishing (protocol encoding)";
  // errors.js: a request that ends builds a RequestError (a stack trace), even after a reply resolved it.
  if (
    base === "request.js" ||
    base === "muxsubscription.js" ||
    base === "nuid.js" ||
    base === "util.js" ||
    base === "errors.js"
  )
    return "NATS client: request/reply bookkeeping";
  if (base === "nats.js")
    return NATS_REQUEST.has(name)
      ? "NATS client: request/reply bookkeeping"
      : "NATS client: publishing (protocol encoding)";
  if (base === "encoders.js") return "NATS client: publishing (protocol encoding)";
  return "NATS client: other";
}

/** What Node itself was doing, by the innermost frame of its own, when no library or file of ours is on the stack. */
function nodeWork(url: string, name: string): string | undefined {
  if (url.startsWith("node:_http")) return "node: HTTP server (parsing, responses)";
  if (url === "node:internal/process/task_queues" || name === "runMicrotasks") return "node: promise jobs (microtasks)";
  if (url === "node:internal/timers") return "node: timers";
  if (url === "node:net" || url.startsWith("node:internal/stream") || url === "node:stream")
    return "node: sockets and streams";
  return undefined;
}

/** The bucket of a busy sample, from its stack (innermost frame first). */
function bucketOf(stack: readonly CallFrame[]): string {
  let text = false;
  let node: string | undefined;
  for (const frame of stack) {
    const name = frame.functionName;
    if (name === "(garbage collector)") return "GC";
    if (name === "(program)") return "V8 and native (program)";
    const source = sourceOf(frame.url);
    if (source.kind === "builtin") {
      if (name === "parse" || name === "stringify") return "JSON encode/decode";
      node ??= nodeWork("", name);
      continue;
    }
    if (source.kind === "node") {
      if (frame.url === "node:internal/encoding" && (name === "decode" || name === "encode")) text = true;
      node ??= nodeWork(frame.url, name);
      continue;
    }
    if (source.kind === "ours") {
      // JSON.parse and JSON.stringify run as part of their caller's frame when V8 inlines them: the self time of these two is theirs.
      if (source.file === "shared/nats/rpc.ts" && (text || name === "decodeJson" || name === "encodeJson"))
        return "JSON encode/decode";
      return `ours: ${source.file}`;
    }
    if (source.pkg === "zod") return "zod validation";
    if (PINO.has(source.pkg)) return "pino logging";
    if (FASTIFY.has(source.pkg) || source.pkg.startsWith("@fastify/")) return "fastify";
    if (source.pkg.startsWith("@nats-io/")) return natsBucket(source.pkg, source.file, name);
    return `other library: ${source.pkg}`;
  }
  if (text) return "text encode/decode";
  return node ?? "node: other";
}

function label(frame: CallFrame): string {
  const name = frame.functionName || "(anonymous)";
  const source = sourceOf(frame.url);
  if (source.kind === "builtin") return name.startsWith("(") ? name : `${name} (builtin)`;
  if (source.kind === "node") return `${name} ${frame.url}`;
  // V8 counts lines and columns from 0 in the code as loaded; tsx's output of our TypeScript is one line, so a column tells its functions apart.
  if (source.kind === "ours")
    return frame.functionName ? `${name} ${source.file}` : `${name} ${source.file}@${frame.columnNumber + 1}`;
  return `${name} ${source.pkg}/${source.file.slice(source.file.lastIndexOf("/") + 1)}:${frame.lineNumber + 1}`;
}

function add(map: Map<string, number>, key: string, count = 1): void {
  map.set(key, (map.get(key) ?? 0) + count);
}

/** Counts the profile's samples that fall in `windows`. */
export function summariseProfile(profile: CpuProfile, windows: readonly TimeWindow[]): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stacks = new Map<number, CallFrame[]>();
  const stackOf = (id: number): CallFrame[] => {
    let stack = stacks.get(id);
    if (!stack) {
      stack = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const node = byId.get(at);
        if (node && node.callFrame.functionName !== "(root)") stack.push(node.callFrame);
      }
      stacks.set(id, stack);
    }
    return stack;
  };

  const summary: ProfileSummary = {
    samples: 0,
    busy: 0,
    sampleIntervalMs: 0,
    buckets: new Map(),
    self: new Map(),
    inclusive: new Map(),
    ourFiles: new Map(),
    owners: new Map(),
  };
  let atUs = profile.startTime;
  for (let index = 0; index < profile.samples.length; index++) {
    atUs += profile.timeDeltas[index] ?? 0;
    const atMs = atUs / 1000;
    if (!windows.some(({ startMs, endMs }) => atMs >= startMs && atMs < endMs)) continue;
    summary.samples += 1;
    const stack = stackOf(profile.samples[index]!);
    const leaf = stack[0];
    if (!leaf || leaf.functionName === "(idle)") continue;
    summary.busy += 1;
    const bucket = bucketOf(stack);
    add(summary.buckets, bucket);
    add(summary.self, label(leaf));
    const labels = new Set<string>();
    const files = new Set<string>();
    let owner: string | undefined;
    for (const frame of stack) {
      const source = sourceOf(frame.url);
      if (source.kind === "ours") {
        owner ??= source.file;
        files.add(source.file);
      }
      if (source.kind === "ours" || source.kind === "lib") labels.add(label(frame));
    }
    for (const each of labels) add(summary.inclusive, each);
    for (const each of files) add(summary.ourFiles, each);
    const owned = summary.owners.get(owner ?? NO_FRAME_OF_OURS) ?? new Map<string, number>();
    add(owned, bucket);
    summary.owners.set(owner ?? NO_FRAME_OF_OURS, owned);
  }
  const span = (profile.endTime - profile.startTime) / 1000;
  summary.sampleIntervalMs = profile.samples.length > 0 ? span / profile.samples.length : 0;
  return summary;
}

function percent(count: number, of: number): string {
  return of === 0 ? "–" : ((100 * count) / of).toFixed(1);
}

function top(map: Map<string, number>, count: number): Array<[string, number]> {
  return [...map].sort((a, b) => b[1] - a[1]).slice(0, count);
}

/** The NATS client's buckets summed, as one more line under the buckets. */
function natsTotal(buckets: Map<string, number>): number {
  return [...buckets].filter(([bucket]) => bucket.startsWith("NATS client")).reduce((sum, [, count]) => sum + count, 0);
}

/** Four tables of one service's profile: buckets, our files, self time and inclusive time by function, and who asked for the work. */
export function profileTables(service: string, summary: ProfileSummary, describeWindows: string): ResultTable[] {
  const { busy } = summary;
  const common = [
    `${describeWindows}; ${summary.samples} samples of about ${summary.sampleIntervalMs.toFixed(2)} ms, of which ${summary.busy} busy (${percent(summary.busy, summary.samples)} % of the main thread's time); shares are of the busy samples`,
  ];
  const bucketRows = top(summary.buckets, 100).map(([bucket, count]) => [bucket, percent(count, busy)]);
  bucketRows.push(["(all NATS client buckets)", percent(natsTotal(summary.buckets), busy)]);
  const describeOwned = (owned: Map<string, number> | undefined) =>
    owned
      ? top(owned, 4)
          .map(([bucket, n]) => `${bucket.startsWith("ours: ") ? "self" : bucket} ${percent(n, busy)}`)
          .join("; ")
      : "";
  const sum = (owned: Map<string, number> | undefined) => (owned ? [...owned.values()].reduce((a, b) => a + b, 0) : 0);
  const fileRows = top(summary.ourFiles, 25).map(([file, count]) => [
    file,
    percent(count, busy),
    percent(sum(summary.owners.get(file)), busy),
    describeOwned(summary.owners.get(file)),
  ]);
  const none = summary.owners.get(NO_FRAME_OF_OURS);
  if (none) fileRows.push([NO_FRAME_OF_OURS, "", percent(sum(none), busy), describeOwned(none)]);
  return [
    {
      title: `(profile) ${service}: busy time by bucket`,
      columns: ["bucket", "% of busy"],
      rows: bucketRows,
      notes: [
        ...common,
        "each busy sample counts once, in the bucket of its innermost frame that says what the work is: JSON.parse/stringify, zod, pino, fastify, the NATS client (by file), else our own file (its self time); Node's internals and builtins are looked through to their caller, and count as node's own only when no library or file of ours is on the stack",
      ],
    },
    {
      title: `(profile) ${service}: busy time under each file of ours (inclusive) and the code that asked for the work`,
      columns: ["file", "% of busy, inclusive", "% as innermost file of ours", "what that time was (% of busy)"],
      rows: fileRows,
      notes: [
        "inclusive: samples with the file anywhere on the stack (they overlap); innermost: the file is the nearest frame of ours to the work, so each sample counts for one file",
        "an async function's continuation has only its own frames on the stack: work after an await is counted under the function that resumed, not its first caller",
      ],
    },
    {
      title: `(profile) ${service}: top functions by self time`,
      columns: ["function", "% of busy"],
      rows: top(summary.self, 25).map(([name, count]) => [name, percent(count, busy)]),
      notes: [
        "a library's line numbers are its JavaScript's; our anonymous functions are told apart by their column in tsx's one-line output",
      ],
    },
    {
      title: `(profile) ${service}: top functions by inclusive time (our code and libraries)`,
      columns: ["function", "% of busy"],
      rows: top(summary.inclusive, 30).map(([name, count]) => [name, percent(count, busy)]),
      notes: [],
    },
  ];
}
