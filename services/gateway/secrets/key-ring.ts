/** One key of a ring: the signer, or a retired key still accepted until `notAfterMs`. */
export interface RingKey<K> {
  kid: string;
  key: K;
  /** Past this instant the key verifies nothing; null while it signs. */
  notAfterMs: number | null;
}

/** The keys one kind of secret is checked with: the one that signs now and the retired ones. */
export interface KeyRing<K> {
  signer: RingKey<K>;
  retired: readonly RingKey<K>[];
}

/** A ring of one key that signs and nothing retired. */
export function ringOfOne<K>(kid: string, key: K): KeyRing<K> {
  return { signer: { kid, key, notAfterMs: null }, retired: [] };
}

/** The key named `kid` if it may still verify at `nowMs`: the signer always, a retired key until its end. */
export function acceptedKey<K>(ring: KeyRing<K>, kid: string, nowMs: number): K | undefined {
  if (ring.signer.kid === kid) return ring.signer.key;
  const retired = ring.retired.find((candidate) => candidate.kid === kid);
  return retired !== undefined && (retired.notAfterMs === null || nowMs < retired.notAfterMs) ? retired.key : undefined;
}

/** The key ids of a ring, for logs: which key signs and which still verify (never the secrets). */
export function describeRing(ring: KeyRing<unknown>): { signing_kid: string; retired_kids: string[] } {
  return { signing_kid: ring.signer.kid, retired_kids: ring.retired.map(({ kid }) => kid) };
}

/**
 * A ring that changes while the gateway runs (a KV watch or a re-read file swaps it);
 * every signature and check reads the ring in place at that moment.
 */
export class LiveRing<K> {
  constructor(private ring: KeyRing<K>) {}

  get current(): KeyRing<K> {
    return this.ring;
  }

  replace(ring: KeyRing<K>): void {
    this.ring = ring;
  }
}
