/**
 * A wait that can be cut short: `wait(ms)` ends after `ms`, on `ring()`, or when the
 * signal aborts. A ring while nobody waits is kept for the next wait, so a wake-up sent
 * while the loop was busy is not lost.
 */
export class Alarm {
  private readonly waiters = new Set<() => void>();
  private rung = false;

  ring(): void {
    if (this.waiters.size === 0) {
      this.rung = true;
      return;
    }
    for (const wake of [...this.waiters]) wake();
  }

  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.rung || signal?.aborted) {
      this.rung = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiters.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });
  }
}
