/**
 * What the bench started and must stop, newest first: services, nats-servers, node
 * loops. A scenario pushes each thing as it starts it and releases it when done; on
 * Ctrl-C or a failure, `stopAll` stops whatever is still there.
 */
export class Cleanup {
  private readonly stack: Array<{ name: string; stop: () => Promise<void> }> = [];

  /** Registers `stop`; the returned function runs it now (once) and forgets it. */
  add(name: string, stop: () => Promise<void>): () => Promise<void> {
    let done: Promise<void> | undefined;
    // One run whoever asks first (the scenario's own `finally` or `stopAll` on Ctrl-C); later callers wait for it.
    const entry = {
      name,
      stop: () => {
        done ??= (async () => {
          const index = this.stack.indexOf(entry);
          if (index >= 0) this.stack.splice(index, 1);
          await stop();
        })();
        return done;
      },
    };
    this.stack.push(entry);
    return entry.stop;
  }

  /** Stops everything still registered, newest first; each step gets `stepTimeoutMs`. Returns what failed. */
  async stopAll(stepTimeoutMs: number): Promise<string[]> {
    const failures: string[] = [];
    while (this.stack.length > 0) {
      const { name, stop } = this.stack.at(-1)!;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not stop within ${stepTimeoutMs} ms`)), stepTimeoutMs);
      });
      try {
        await Promise.race([stop(), timeout]);
      } catch (error) {
        failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        clearTimeout(timer);
      }
    }
    return failures;
  }
}
