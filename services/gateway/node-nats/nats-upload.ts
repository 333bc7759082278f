import { createHash, type Hash } from "node:crypto";
import { Match, type Msg, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import {
  type Artifact,
  NATS_UPLOAD_CHUNK_MAX_BYTES,
  NatsUploadCommitRequest,
  NatsUploadOpenRequest,
  type NatsUploadOpenResponse,
  NODE_NATS_HEADERS,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { subjects } from "../../../shared/nats/index.js";
import { randomBase62, zodIssues } from "../../../shared/runtime/index.js";
import type { ArtifactRouteParams } from "../artifacts/artifact-params.js";
import { UPLOAD_ROUTE } from "../artifacts/artifact-urls.js";
import { authorizeUpload, sizeRefusal, type AuthorizedUpload } from "../artifacts/upload-artifact.js";
import type { GatewayContext } from "../gateway-context.js";
import { absentAsEmpty } from "../http/register-rpc.js";
import { ChunkFeed } from "./chunk-feed.js";
import { natsUploadsOpen } from "./node-nats-metrics.js";
import { answer, decodeBody, type NatsAnswer, PendingReply } from "./nats-reply.js";

/** The largest commit or open body: a URL and a few numbers. */
const CONTROL_MAX_BYTES = 16 * 1024;

function invalid(message: string, issues?: Array<{ path: string; message: string }>): AppError {
  return new AppError("request.invalid", message, issues ? { details: { issues } } : {});
}

/** A query string as fastify reads it: a name given twice is a list, so it matches no grant. */
function queryRecord(search: URLSearchParams): Record<string, unknown> {
  const record: Record<string, string | string[]> = {};
  for (const [name, value] of search) {
    const seen = record[name];
    record[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return record;
}

/** The path and query of a signed upload URL, as the HTTP route would receive them. */
function uploadTarget(url: string): { path: string; query: Record<string, unknown>; params: ArtifactRouteParams } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AppError("url.signature_invalid", "This URL is not a valid signed URL.");
  }
  const prefix = `${UPLOAD_ROUTE}/`;
  const segments = parsed.pathname.startsWith(prefix) ? parsed.pathname.slice(prefix.length).split("/") : [];
  if (segments.length !== 2) throw new AppError("url.signature_invalid", "This URL is not a signed upload URL.");
  const decode = (segment: string) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw invalid("The path does not name a job and an artifact.");
    }
  };
  return {
    path: parsed.pathname,
    query: queryRecord(parsed.searchParams),
    params: { jobId: decode(segments[0]!), artifactId: decode(segments[1]!) },
  };
}

/**
 * One artifact upload over NATS, on this replica: its chunks feed the same object-store
 * put as an HTTP body does, one at a time, each answered once the store has taken it.
 */
class NatsUpload {
  private readonly feed = new ChunkFeed();
  private readonly hash: Hash = createHash("sha256");
  private readonly saved: Promise<Artifact>;
  private received = 0;
  private nextSeq = 1;
  private busy = false;
  private ended = false;
  private idleTimer: NodeJS.Timeout | undefined;
  readonly subscription: Subscription;

  constructor(
    private readonly deps: { gw: GatewayContext; log: Logger; idleMs: number; onEnd: (upload: NatsUpload) => void },
    readonly subject: string,
    private readonly upload: AuthorizedUpload,
  ) {
    this.saved = deps.gw.artifacts.save(upload.ref, upload.facts, this.feed.stream);
    // Whatever ends the put (abort, a store failure) ends the upload; its waiter sees the error.
    this.saved.catch((error: unknown) => this.end(error));
    this.subscription = deps.gw.nc.subscribe(`${subject}.*`, {
      callback: (error, msg) => {
        if (error) return void deps.log.warn({ err: error }, "upload subscription failed");
        void this.receive(msg);
      },
    });
    this.armIdleTimer();
  }

  /** Aborts the upload: the put fails and purges what it had stored. */
  abort(reason: AppError): void {
    this.end(reason);
  }

  private end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idleTimer);
    if (error !== undefined) this.feed.fail(error);
    this.subscription.unsubscribe();
    this.deps.onEnd(this);
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.deps.log.info({ subject: this.subject }, "artifact upload idle too long; aborted");
      this.abort(new AppError("request.invalid", "The upload was idle too long and was aborted; nothing was stored."));
    }, this.deps.idleMs);
  }

  private async receive(msg: Msg): Promise<void> {
    const step = msg.subject.slice(this.subject.length + 1);
    const reply = new PendingReply(msg, this.deps.log, `artifact.${step}`);
    if (this.ended) return reply.fail(new AppError("request.invalid", "This upload has ended; start again."));
    if (this.busy) {
      const error = invalid("Send one message at a time and wait for each answer; the upload was aborted.");
      this.abort(error);
      return reply.fail(error);
    }
    this.busy = true;
    // Idle means the agent is silent: while a step waits on the store, the clock stops.
    clearTimeout(this.idleTimer);
    await answer(reply, async () => {
      try {
        if (step === "chunk") return await this.chunk(msg);
        if (step === "commit") return await this.commit(msg);
        if (step === "abort") {
          this.abort(invalid("The client aborted the upload; nothing was stored."));
          return { message: "Upload aborted", payload: { aborted: true } };
        }
        throw invalid(`No upload step "${step}": use chunk, commit or abort.`);
      } catch (error) {
        // A refused step ends the upload: nothing half-written stays behind.
        this.abort(error instanceof AppError ? error : new AppError("internal.error"));
        await this.saved.catch(() => undefined);
        throw error;
      } finally {
        this.busy = false;
        if (!this.ended) this.armIdleTimer();
      }
    });
  }

  private async chunk(msg: Msg): Promise<NatsAnswer> {
    const seq = Number(msg.headers?.get(NODE_NATS_HEADERS.chunkSeq, Match.IgnoreCase) ?? "");
    if (seq !== this.nextSeq)
      throw invalid(`Expected chunk ${this.nextSeq}; the upload was aborted.`, [
        { path: NODE_NATS_HEADERS.chunkSeq, message: `expected ${this.nextSeq}` },
      ]);
    if (msg.data.length === 0 || msg.data.length > NATS_UPLOAD_CHUNK_MAX_BYTES) {
      throw invalid(`A chunk holds 1 to ${NATS_UPLOAD_CHUNK_MAX_BYTES} bytes.`);
    }
    this.received += msg.data.length;
    const refusal = sizeRefusal(this.upload, this.received);
    if (refusal) throw refusal;
    this.nextSeq += 1;
    // The message's buffer may be reused once the callback returns; the store keeps its own copy.
    const bytes = new Uint8Array(msg.data);
    this.hash.update(bytes);
    await this.feed.push(bytes);
    return { message: "Chunk stored", payload: { received_bytes: this.received } };
  }

  private async commit(msg: Msg): Promise<NatsAnswer> {
    const parsed = NatsUploadCommitRequest.safeParse(absentAsEmpty(decodeBody(msg.data, CONTROL_MAX_BYTES)));
    if (!parsed.success) throw invalid("The commit does not match the schema.", zodIssues(parsed.error));
    const sha256 = this.hash.digest("hex");
    const issues = [
      ...(parsed.data.size_bytes === this.received
        ? []
        : [{ path: "size_bytes", message: `the gateway received ${this.received} bytes` }]),
      ...(parsed.data.sha256 === sha256 ? [] : [{ path: "sha256", message: "does not match the bytes received" }]),
    ];
    if (issues.length > 0)
      throw invalid("The bytes received are not the file the commit describes; nothing was stored.", issues);
    this.feed.close();
    const artifact = await this.saved;
    this.end();
    return { message: "Artifact stored", payload: artifact };
  }
}

/** The uploads open on this replica, each on a subject of its own under this replica's id. */
export class NatsUploads {
  private readonly open = new Set<NatsUpload>();

  constructor(
    private readonly deps: {
      gw: GatewayContext;
      natsUp: () => boolean;
      instanceId: string;
      log: Logger;
      idleMs: number;
    },
  ) {}

  /** `cjs.nodeplane.artifact.open`: checks the signed URL as the HTTP PUT does and opens the upload here. */
  async start(msg: Msg): Promise<NatsAnswer> {
    const { gw, natsUp, instanceId, log, idleMs } = this.deps;
    const parsed = NatsUploadOpenRequest.safeParse(absentAsEmpty(decodeBody(msg.data, CONTROL_MAX_BYTES)));
    if (!parsed.success) throw invalid("The request body does not match the schema.", zodIssues(parsed.error));
    const { url, size_bytes, content_type } = parsed.data;
    const authorized = await authorizeUpload(gw, natsUp, {
      ...uploadTarget(url),
      declaredBytes: size_bytes,
      contentType: () => content_type,
    });
    const subject = subjects.nodePlaneUpload(instanceId, randomBase62(16));
    const upload = new NatsUpload(
      { gw, log: log.child({ upload: subject }), idleMs, onEnd: (ended) => this.ended(ended) },
      subject,
      authorized,
    );
    this.open.add(upload);
    natsUploadsOpen.inc();
    const payload: NatsUploadOpenResponse = {
      subject,
      chunk_bytes: NATS_UPLOAD_CHUNK_MAX_BYTES,
      idle_timeout_seconds: Math.ceil(idleMs / 1000),
    };
    return { message: "Upload open", payload };
  }

  private ended(upload: NatsUpload): void {
    if (this.open.delete(upload)) natsUploadsOpen.dec();
  }

  /** Aborts every open upload (the gateway stops): each leaves nothing behind; its agent starts again elsewhere. */
  abortAll(): void {
    for (const upload of [...this.open])
      upload.abort(
        new AppError("service.unavailable", "The gateway is stopping; upload again.", { retryAfterSeconds: 1 }),
      );
  }
}
