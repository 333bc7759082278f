/**
 * The life of each job of one measured run, on the monotonic clock (`clock.ts`): when the
 * client sent its submit, when the node or worker received it, when it was completed.
 * Events may come in any order (a node can receive a job before its submit is answered),
 * so they are joined by job id.
 */
export class JobTracker {
  readonly sentAt = new Map<string, number>();
  readonly startedAt = new Map<string, number>();
  readonly completedAt = new Map<string, number>();
  private completedOfRun = 0;
  private lastCompletedMs = 0;
  private waiter: { count: number; resolve: () => void } | undefined;

  /** The client sent the submit of `id` at `atMs` (known once the submit is answered). */
  submitted(id: string, atMs: number): void {
    if (this.sentAt.has(id)) return;
    this.sentAt.set(id, atMs);
    if (this.completedAt.has(id)) this.countCompleted(this.completedAt.get(id)!);
  }

  /** The node or worker received `id`; only the first delivery counts. */
  started(id: string, atMs: number): void {
    if (!this.startedAt.has(id)) this.startedAt.set(id, atMs);
  }

  completed(id: string, atMs: number): void {
    if (this.completedAt.has(id)) return;
    this.completedAt.set(id, atMs);
    if (this.sentAt.has(id)) this.countCompleted(atMs);
  }

  /** Jobs of this run (submitted here) that were completed. */
  get completedCount(): number {
    return this.completedOfRun;
  }

  /** When the last job of this run was completed (monotonic ms); 0 before any. */
  get lastCompletedAtMs(): number {
    return this.lastCompletedMs;
  }

  /** Resolves true once `count` jobs of this run were completed, false after `timeoutMs`. */
  waitForCompleted(count: number, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (this.completedOfRun >= count) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (reached: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.waiter = undefined;
        resolve(reached);
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), timeoutMs);
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiter = { count, resolve: () => finish(true) };
    });
  }

  /** Submit → start of each job of this run that started, in ms. */
  submitToStartMs(): number[] {
    const out: number[] = [];
    for (const [id, sent] of this.sentAt) {
      const started = this.startedAt.get(id);
      if (started !== undefined) out.push(started - sent);
    }
    return out;
  }

  /** Jobs of this run that started by `atMs`. */
  startedBy(atMs: number): number {
    let count = 0;
    for (const id of this.sentAt.keys()) if ((this.startedAt.get(id) ?? Number.POSITIVE_INFINITY) <= atMs) count += 1;
    return count;
  }

  private countCompleted(atMs: number): void {
    this.completedOfRun += 1;
    this.lastCompletedMs = Math.max(this.lastCompletedMs, atMs);
    if (this.waiter && this.completedOfRun >= this.waiter.count) this.waiter.resolve();
  }
}
