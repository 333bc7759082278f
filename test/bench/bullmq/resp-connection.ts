import { createConnection, type Socket } from "node:net";
import type { BunRedisRawClient } from "bullmq";

/** A reply of the RESP2 protocol: simple and bulk strings as text, integers as numbers, errors inside arrays as Error. */
export type RespValue = string | number | null | Error | RespValue[];

type Arg = string | number | Buffer;

const CRLF = Buffer.from("\r\n");
/** Parsing stopped at the end of the buffer: wait for more bytes and start that reply again. */
const INCOMPLETE = Symbol("incomplete");

/**
 * One Redis connection speaking RESP2 over TCP, shaped like Bun's `RedisClient` (`send`,
 * `connect`, `close`, `connected`, `onconnect`, `onclose`, `duplicate`) so that BullMQ's
 * own Bun adapter (`createBunRedisClient`) drives it: BullMQ's scripts, pipelines and
 * blocking reads run unchanged on top, and this file is only the wire.
 *
 * It exists because the project installs BullMQ 6 without any of the Redis drivers it
 * can use (ioredis, node-redis); `bullmq-connection.ts` prefers ioredis when it is there.
 * Commands are pipelined: every command sent within one tick goes out in one write, and
 * replies are matched to commands in order, as RESP guarantees.
 */
export class RespConnection implements BunRedisRawClient {
  connected = false;
  onconnect: (() => void) | null = null;
  onclose: ((error?: Error) => void) | null = null;
  onerror: ((error: Error) => void) | null = null;

  private socket: Socket | undefined;
  private readonly pending: Array<{ resolve: (value: RespValue) => void; reject: (error: Error) => void }> = [];
  private buffer: Buffer = Buffer.alloc(0);
  private corked = false;

  constructor(readonly options: { host: string; port: number }) {}

  connect(): Promise<void> {
    if (this.socket) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const socket = createConnection({ host: this.options.host, port: this.options.port, noDelay: true, keepAlive: true });
      this.socket = socket;
      socket.once("connect", () => {
        this.connected = true;
        this.onconnect?.();
        resolve();
      });
      socket.on("data", (chunk: Buffer) => this.receive(chunk));
      socket.on("error", (error) => {
        if (!this.connected) reject(error);
        this.onerror?.(error);
      });
      socket.once("close", () => {
        const wasConnected = this.connected;
        this.connected = false;
        this.socket = undefined;
        this.failPending(new Error("Connection closed"));
        if (wasConnected) this.onclose?.();
      });
    });
  }

  /** Sends one command; resolves with its reply, rejects with the server's error reply. */
  send<T = RespValue>(command: string, args: readonly Arg[]): Promise<T> {
    const socket = this.socket;
    if (!socket || !this.connected) return Promise.reject(new Error("Connection closed"));
    const frame = encodeCommand(command, args);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ resolve: resolve as (value: RespValue) => void, reject });
      if (!this.corked) {
        this.corked = true;
        socket.cork();
        process.nextTick(() => {
          this.corked = false;
          socket.uncork();
        });
      }
      socket.write(frame);
    });
  }

  close(): void {
    this.socket?.destroy();
  }

  /** For BullMQ's check that this is a client instance (connect, disconnect, duplicate). */
  disconnect(): void {
    this.close();
  }

  /** A new, unconnected connection to the same server (the Worker's blocking connection). */
  async duplicate(): Promise<this> {
    return new RespConnection(this.options) as this;
  }

  // The three commands Bun's client has as methods and the adapter's type asks for.
  get(key: string): Promise<string | null> {
    return this.send("GET", [key]);
  }

  smembers(key: string): Promise<string[]> {
    return this.send("SMEMBERS", [key]);
  }

  incr(key: string): Promise<number> {
    return this.send("INCR", [key]);
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let offset = 0;
    while (offset < this.buffer.length) {
      const parsed = parseReply(this.buffer, offset);
      if (parsed === INCOMPLETE) break;
      offset = parsed.end;
      const waiter = this.pending.shift();
      if (!waiter) continue;
      if (parsed.value instanceof Error) waiter.reject(parsed.value);
      else waiter.resolve(parsed.value);
    }
    this.buffer = offset === this.buffer.length ? Buffer.alloc(0) : this.buffer.subarray(offset);
  }

  private failPending(error: Error): void {
    for (const waiter of this.pending.splice(0)) waiter.reject(error);
  }
}

/** `*<n>\r\n` then each argument as a bulk string. */
export function encodeCommand(command: string, args: readonly Arg[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length + 1}\r\n$${Buffer.byteLength(command)}\r\n${command}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return Buffer.concat(parts);
}

/** One reply starting at `start`, or INCOMPLETE when the buffer ends inside it. */
export function parseReply(buffer: Buffer, start: number): { value: RespValue; end: number } | typeof INCOMPLETE {
  const lineEnd = buffer.indexOf(CRLF, start);
  if (lineEnd < 0) return INCOMPLETE;
  const type = buffer[start];
  const line = buffer.toString("utf8", start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case 0x2b: // +
      return { value: line, end: next };
    case 0x2d: // -
      return { value: new Error(line), end: next };
    case 0x3a: // :
      return { value: Number(line), end: next };
    case 0x24: {
      // $
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buffer.length < next + length + 2) return INCOMPLETE;
      return { value: buffer.toString("utf8", next, next + length), end: next + length + 2 };
    }
    case 0x2a: {
      // *
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let offset = next;
      for (let index = 0; index < count; index++) {
        const item = parseReply(buffer, offset);
        if (item === INCOMPLETE) return INCOMPLETE;
        items.push(item.value);
        offset = item.end;
      }
      return { value: items, end: offset };
    }
    default:
      throw new Error(`unexpected RESP reply type ${JSON.stringify(String.fromCharCode(type ?? 0))}`);
  }
}
