/** How long an answer is used before it is asked again. */
const ANSWER_TTL_MS = 60_000;
/** After the owner did not answer, how long the last answer (or none) stands before it is asked again. */
const RETRY_AFTER_FAILURE_MS = 5_000;
/** Keys remembered; past it the memo starts over (it saves requests, it decides nothing). */
const KEYS_REMEMBERED = 10_000;

/**
 * A business's quota as the service that owns it (billing, from the plan) last answered
 * it, kept a minute so that a busy tenant does not cost a request per call. When the owner
 * does not answer, the last answer stands, or none (null, no quota): a tenant is not
 * refused for billing's outage; it is asked again after a few seconds.
 */
export class QuotaMemo {
  private readonly answers = new Map<string, { quota: number | null; atMs: number }>();

  constructor(private readonly clock: { now(): number }) {}

  async get(
    key: string,
    ask: () => Promise<number | null>,
    onFailure: (error: unknown) => void,
  ): Promise<number | null> {
    const known = this.answers.get(key);
    const now = this.clock.now();
    if (known && now - known.atMs < ANSWER_TTL_MS) return known.quota;
    try {
      const quota = await ask();
      if (this.answers.size >= KEYS_REMEMBERED) this.answers.clear();
      this.answers.set(key, { quota, atMs: now });
      return quota;
    } catch (error) {
      onFailure(error);
      const standing = known?.quota ?? null;
      this.answers.set(key, { quota: standing, atMs: now - ANSWER_TTL_MS + RETRY_AFTER_FAILURE_MS });
      return standing;
    }
  }
}
