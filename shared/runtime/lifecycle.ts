import type { Logger } from "pino";

/** What every service factory returns: `build<Name>(deps)` → `{ start, stop }`. */
export interface Service {
  readonly name: string;
  start(): Promise<void>;
  /** Stops taking work and lets work in flight finish. */
  stop(): Promise<void>;
  /** True once started and able to serve (its readiness check). */
  ready(): boolean;
}

/** A source of time, injected so tests can control it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

const REPEAT_SIGNAL_WINDOW_MS = 1000;

/** A shutdown that has not finished by then (NATS unreachable, a stuck request) exits anyway. */
const SHUTDOWN_TIMEOUT_MS = 15_000;

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits 0; a second signal exits at once.
 * Only `main.ts` files call this.
 */
export function installShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stoppingSince: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    // Ctrl-C under npm or tsx arrives twice at once (the terminal's and the wrapper's): only a later one means "now".
    if (stoppingSince !== undefined && Date.now() - stoppingSince < REPEAT_SIGNAL_WINDOW_MS) return;
    if (stoppingSince !== undefined) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stoppingSince = Date.now();
    logger.info({ signal }, "shutting down");
    setTimeout(() => {
      logger.error({ timeout_ms: SHUTDOWN_TIMEOUT_MS }, "shutdown took too long: exiting");
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
