import type { Readable } from "node:stream";
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import type { ObjectInfo, ObjectStore } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { z } from "zod";
import { Artifact, checkId } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import {
  BUCKETS,
  ensureBuckets,
  ensureObjectStore,
  JsonBucket,
  kvKey,
  OBJECT_STORES,
  RecordBusyError,
  type TopologyOptions,
} from "../../../shared/nats/index.js";
import { ArtifactUsage, type Business } from "./artifact-usage.js";
import { readObject, type ByteSpan } from "./read-object.js";

/** One artifact: tenancy, job and name. */
export interface ArtifactRef {
  app_id: string;
  business_id: string;
  job_id: string;
  artifact_id: string;
}

/** The index entry of an artifact: what retrieve lists, and which version of the object it describes. */
export const ArtifactRecord = Artifact.extend({
  app_id: z.string(),
  business_id: z.string(),
  job_id: z.string(),
  /** The object store revision of the version described: a slower writer never overwrites a newer version's entry. */
  object_revision: z.number().int(),
});
export type ArtifactRecord = z.infer<typeof ArtifactRecord>;

/** What the upload states beside the bytes. */
export interface UploadFacts {
  content_type: string;
  attempt: number | null;
}

/** A stored artifact and the object that holds it. */
export interface StoredArtifact {
  artifact: Artifact;
  info: ObjectInfo;
}

const DIGEST_PREFIX = "SHA-256=";
/** JetStream code of "maximum bytes exceeded": the store's `max_bytes` (CJS_ARTIFACT_STORE_MAX_BYTES) is reached. */
const MAX_BYTES_EXCEEDED = 10077;

/** A put the full store refused: every tenant's uploads wait for room (deletions, retention), nothing else does. */
function storeFull(error: unknown): unknown {
  if ((error as { code?: unknown } | null)?.code !== MAX_BYTES_EXCEEDED) return error;
  return new AppError("service.unavailable", "The artifact store is full; nothing was stored. Try again later.", {
    retryAfterSeconds: 60,
    details: { reason: "artifact_store_full" },
  });
}

/** The key of a job's artifacts in the index, each id checked by its format. */
function jobIndexKey(job: Omit<ArtifactRef, "artifact_id">): string {
  return kvKey(checkId("app", job.app_id), checkId("business", job.business_id), checkId("job", job.job_id));
}

/** Tenancy is in the name: `<app>.<business>.<job id>/<artifact id>`, each id checked by its format. */
export function objectName(ref: ArtifactRef): string {
  return `${jobIndexKey(ref)}/${checkId("artifact", ref.artifact_id)}`;
}

/** The artifact id is encoded by `kvKey` when it holds dots. */
function indexKey(ref: ArtifactRef): string {
  return `${jobIndexKey(ref)}.${kvKey(checkId("artifact", ref.artifact_id))}`;
}

/** The subject of an object's metadata in the object store's stream (how `@nats-io/obj` names it: the name in padded base64url). */
function metaSubject(name: string): string {
  const encoded = Buffer.from(name, "utf8").toString("base64").replace(/\+/g, "-").replace(/\//g, "_");
  return `$O.${OBJECT_STORES.artifacts}.M.${encoded}`;
}

/** The object store keeps a SHA-256 of every object as `SHA-256=<base64url>`; artifacts show it in hex. */
function hexDigest(digest: string): string {
  if (!digest.startsWith(DIGEST_PREFIX)) throw new Error(`unexpected object digest ${digest}`);
  return Buffer.from(digest.slice(DIGEST_PREFIX.length), "base64url").toString("hex");
}

function toArtifact(artifactId: string, info: ObjectInfo): Artifact {
  const attempt = info.metadata?.attempt;
  return {
    artifact_id: artifactId,
    size_bytes: info.size,
    sha256: hexDigest(info.digest),
    content_type: info.metadata?.content_type ?? "application/octet-stream",
    created_at: new Date(info.mtime).toISOString(),
    attempt: attempt === undefined ? null : Number(attempt),
  };
}

/**
 * Artifacts: their bytes in the `cjs_artifacts` object store, their listing in the
 * `cjs_artifact_index` bucket, and each business's bytes stored in `CJS_ARTIFACT_USAGE`.
 * All are written by the gateway only. The usage follows the index: what an index write
 * added or replaced, and what a removal took out of it, is counted right after it.
 */
export class ArtifactStore {
  private constructor(
    private readonly objects: ObjectStore,
    private readonly index: JsonBucket<typeof ArtifactRecord>,
    private readonly usage: ArtifactUsage,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {}

  /** `maxStoreBytes`: the object store's `max_bytes`, every tenant's artifacts together. */
  static async open(
    nc: NatsConnection,
    topology: TopologyOptions & { logger: Logger },
    maxStoreBytes: number,
  ): Promise<ArtifactStore> {
    const jsm = await jetstreamManager(nc);
    const [objects, kv, usage] = await Promise.all([
      ensureObjectStore(nc, OBJECT_STORES.artifacts, { ...topology, maxBytes: maxStoreBytes }),
      ensureBuckets(nc, [BUCKETS.artifactIndex], topology),
      ArtifactUsage.open(nc, jsm, topology),
    ]);
    return new ArtifactStore(
      objects,
      new JsonBucket(kv[BUCKETS.artifactIndex], ArtifactRecord),
      usage,
      jetstream(nc),
      jsm,
    );
  }

  /** Bytes of artifacts the business keeps stored. */
  usedBytes(business: Business): Promise<number> {
    return this.usage.used(business);
  }

  /** The size of the version of this artifact listed now; 0 when there is none. */
  async listedBytes(ref: ArtifactRef): Promise<number> {
    return (await this.index.get(indexKey(ref)))?.value.size_bytes ?? 0;
  }

  /**
   * Streams `body` into the object store (chunk by chunk, read only as fast as the store
   * takes it, never whole in memory), then indexes it. An upload that fails midway leaves
   * no chunk behind and the previous version, if any, in place. Uploading a name again
   * replaces it.
   */
  async save(ref: ArtifactRef, facts: UploadFacts, body: ReadableStream<Uint8Array>): Promise<Artifact> {
    const metadata: Record<string, string> = { content_type: facts.content_type };
    if (facts.attempt !== null) metadata.attempt = String(facts.attempt);
    const info = await this.objects.put({ name: objectName(ref), metadata }, body).catch((error: unknown) => {
      throw storeFull(error);
    });
    const artifact = toArtifact(ref.artifact_id, info);
    const replaced = await this.writeIndex(ref, {
      ...artifact,
      app_id: ref.app_id,
      business_id: ref.business_id,
      job_id: ref.job_id,
      object_revision: info.revision,
    });
    if (replaced !== null) await this.usage.add(ref, artifact.size_bytes - replaced);
    return artifact;
  }

  /**
   * Keeps the entry of the newest version: two uploads of one name may finish in either
   * order. Returns the size of the entry it replaced (0 for none), or null when a newer
   * version's entry was there already (that upload counted the bytes stored now).
   */
  private async writeIndex(ref: ArtifactRef, record: ArtifactRecord): Promise<number | null> {
    let replaced = 0;
    try {
      const written = await this.index.upsert(indexKey(ref), (current) => {
        if (current && current.object_revision >= record.object_revision) return undefined;
        replaced = current?.size_bytes ?? 0;
        return record;
      });
      return written?.written ? replaced : null;
    } catch (error) {
      if (error instanceof RecordBusyError)
        throw new AppError("service.unavailable", "The artifact index is too busy right now; upload again.", {
          retryAfterSeconds: 1,
        });
      throw error;
    }
  }

  /** The artifact as stored now, or null. */
  async find(ref: ArtifactRef): Promise<StoredArtifact | null> {
    const info = await this.objects.info(objectName(ref));
    if (!info || info.deleted) return null;
    return { artifact: toArtifact(ref.artifact_id, info), info };
  }

  /** A job's artifacts, by name. */
  async list(job: Omit<ArtifactRef, "artifact_id">): Promise<Artifact[]> {
    const keys = await this.index.keys(`${jobIndexKey(job)}.*`);
    const records = await Promise.all(keys.map(async (key) => (await this.index.get(key))?.value));
    return records
      .filter((record): record is ArtifactRecord => record !== undefined)
      .map(
        ({ app_id: _app, business_id: _business, job_id: _job, object_revision: _revision, ...artifact }) => artifact,
      )
      .sort((a, b) => (a.artifact_id < b.artifact_id ? -1 : a.artifact_id > b.artifact_id ? 1 : 0));
  }

  /**
   * Removes one artifact; false when the job has no artifact of that name. The index entry
   * goes first, so a crash midway can leave unlisted bytes but never a listed artifact
   * whose download fails. It goes by compare-and-set, so of two removals at once only one
   * takes its bytes off the business's usage. Then the bytes, then the object's "deleted"
   * metadata the object store leaves behind, so nothing of the artifact stays in the store.
   */
  async remove(ref: ArtifactRef): Promise<boolean> {
    const key = indexKey(ref);
    const name = objectName(ref);
    const [indexed, info] = await Promise.all([this.index.get(key), this.objects.info(name)]);
    if (!indexed && (!info || info.deleted)) return false;
    const unlisted = indexed ? await this.index.removeIf(key, () => true, { known: indexed }) : null;
    if (unlisted) {
      await this.usage.add(ref, -unlisted.value.size_bytes);
      await this.index.erase(key);
    }
    if (info && !info.deleted) await this.objects.delete(name);
    await this.jsm.streams.purge(`OBJ_${OBJECT_STORES.artifacts}`, { filter: metaSubject(name) });
    return true;
  }

  /** Removes every artifact of a job (a deleted job's); the number removed. */
  async removeAll(job: Omit<ArtifactRef, "artifact_id">): Promise<number> {
    let removed = 0;
    for (const key of await this.index.keys(`${jobIndexKey(job)}.*`)) {
      const record = (await this.index.get(key))?.value;
      if (record && (await this.remove({ ...job, artifact_id: record.artifact_id }))) removed += 1;
    }
    return removed;
  }

  /** The bytes of `span` (all of them without one), read as the consumer of the stream asks for them. */
  read(stored: StoredArtifact, span?: ByteSpan): Readable {
    return readObject(this.js, OBJECT_STORES.artifacts, stored.info, span);
  }
}
