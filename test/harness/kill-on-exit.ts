/**
 * Servers a test process started, killed when it exits or is signalled, so a failing or
 * interrupted test file leaks none.
 */
export interface Killable {
  /** Synchronous: an 'exit' handler cannot wait. */
  killNow(): void;
}

const live = new Set<Killable>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const killAll = (): void => {
    for (const victim of live) victim.killNow();
  };
  process.once("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = (): void => {
      killAll();
      // Listening suppressed the default action; when nobody else handles the signal, restore it.
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** Kills `victim` if the process ends while it is registered; the returned function unregisters it. */
export function killOnExit(victim: Killable): () => void {
  install();
  live.add(victim);
  return () => live.delete(victim);
}
