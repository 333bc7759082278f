import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { AppError } from "../../../shared/errors/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import { QuotaMemo } from "../../../shared/runtime/index.js";
import type { ArtifactRef, ArtifactStore } from "./artifact-store.js";

/** How much more one upload may store for its business, and why. */
export interface UploadRoom {
  /** The business's budget: its plan's `max_artifact_bytes`. */
  maxBytes: number;
  /** What the business keeps stored now. */
  usedBytes: number;
  /** What this upload may hold: the budget less what is kept, plus the version of the same name it replaces. */
  roomBytes: number;
}

export function quotaExceeded(room: UploadRoom): AppError {
  return new AppError(
    "artifacts.quota_exceeded",
    `The business keeps ${room.usedBytes} bytes of artifacts of the ${room.maxBytes} its plan allows, so this upload does not fit; delete artifacts or jobs to make room.`,
    { details: { max_bytes: room.maxBytes, used_bytes: room.usedBytes } },
  );
}

/**
 * Each business's budget of artifact bytes stored, its plan's `limits.max_artifact_bytes`
 * (asked of billing, kept a minute; none for the operator's own business, nor while
 * billing does not answer), against what it keeps stored, counted over every gateway.
 */
export class ArtifactBudget {
  private readonly quotas: QuotaMemo;

  constructor(
    private readonly deps: {
      nc: NatsConnection;
      artifacts: ArtifactStore;
      clock: { now(): number };
      logger: Logger;
    },
  ) {
    this.quotas = new QuotaMemo(deps.clock);
  }

  /** The room an upload of `ref` has; null when its business has no budget. */
  async room(ref: ArtifactRef): Promise<UploadRoom | null> {
    const business = { app_id: ref.app_id, business_id: ref.business_id };
    const maxBytes = await this.quotas.get(
      `${ref.app_id}/${ref.business_id}`,
      async () =>
        (await requestRpc(this.deps.nc, "billingArtifactQuota", business, { timeoutMs: 2_000 })).max_artifact_bytes,
      (error) =>
        this.deps.logger.warn(
          { err: error, business_id: ref.business_id },
          "could not read a business's artifact budget; its uploads are not held to it until billing answers",
        ),
    );
    if (maxBytes === null) return null;
    const [usedBytes, replacedBytes] = await Promise.all([
      this.deps.artifacts.usedBytes(business),
      this.deps.artifacts.listedBytes(ref),
    ]);
    return { maxBytes, usedBytes, roomBytes: Math.max(0, maxBytes - usedBytes + replacedBytes) };
  }
}
