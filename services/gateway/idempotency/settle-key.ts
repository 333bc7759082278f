import { setTimeout as delay } from "node:timers/promises";
import { newId } from "../../../shared/runtime/index.js";
import type { GatewayContext } from "../gateway-context.js";
import type { IdempotencyRecord } from "./idempotency-store.js";

/** How long a repeat waits for the first request's answer. */
export const WAIT_FOR_ANSWER_MS = 5_000;
/** The first and the longest pause between two reads of a key still being served. */
const FIRST_PAUSE_MS = 20;
const LONGEST_PAUSE_MS = 250;
/**
 * A claim this old belongs to a request that will not finish (its gateway stopped): well
 * past the longest a request to the scheduler may take.
 */
export const CLAIM_TAKEOVER_MS = 30_000;

/** Where a request with an Idempotency-Key stands once it has looked at the key's record. */
export type KeyStanding =
  /**
   * It holds the key: it does the work, then stores the answer (`complete`) or gives the key
   * back. `first`: the key was new, so the record's job id is the one this request chose.
   */
  | { kind: "holder"; holder: string; record: IdempotencyRecord; first: boolean }
  /** The first request's answer, to replay. */
  | { kind: "answered"; answer: unknown }
  /** The holder stopped (abandoned or stale) or is still at work after WAIT_FOR_ANSWER_MS: no answer to replay. */
  | { kind: "unsettled"; record: IdempotencyRecord; stale: boolean };

/**
 * Claims the key, or waits (polling, at most WAIT_FOR_ANSWER_MS) for the answer of the
 * request that holds it. With `takeOver`, a stale claim is taken over by compare-and-set
 * and this request becomes the holder; without, a stale claim is answered at once.
 * A key given back (its holder was refused) is reclaimed: with the same body, under the
 * record's job id.
 */
export async function settleKey(
  gw: GatewayContext,
  recordKey: string,
  request: Pick<IdempotencyRecord, "route" | "fingerprint" | "job_id">,
  { takeOver }: { takeOver: boolean },
): Promise<KeyStanding> {
  const holder = newId("idem");
  const waitUntil = performance.now() + WAIT_FOR_ANSWER_MS;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    const now = gw.clock.now();
    const fresh = { ...request, holder, claimed_at: now, answer: null };
    const { record, first } = await gw.idempotency.claim(recordKey, fresh);
    if (first) return { kind: "holder", holder, record: record.value, first: true };
    if (record.value.released === true) {
      const reclaimed = await gw.idempotency.reclaim(recordKey, record, fresh);
      if (reclaimed) return { kind: "holder", holder, record: reclaimed.value, first: false };
      continue;
    }
    if (record.value.answer !== null) return { kind: "answered", answer: record.value.answer };
    const stale = now - record.value.claimed_at >= CLAIM_TAKEOVER_MS;
    if (stale && !takeOver) return { kind: "unsettled", record: record.value, stale };
    if (stale) {
      const taken = await gw.idempotency.takeOver(recordKey, record, holder, now);
      if (taken) return { kind: "holder", holder, record: taken.value, first: false };
    }
    if (performance.now() >= waitUntil) return { kind: "unsettled", record: record.value, stale };
    await delay(pause);
  }
}
