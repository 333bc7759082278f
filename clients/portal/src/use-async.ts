import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  reload: () => Promise<void>;
}

/**
 * Loads `load()` now, again when `deps` change, and every `pollMs` while `poll` says so
 * (live state without a socket: the API has no push for jobs and nodes). A poll replaces
 * the data in place, so a list keeps its rows, its scroll and what is selected in it; an
 * answer to a load of older `deps` is dropped.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
  options: { pollMs?: number; poll?: (data: T | undefined) => boolean } = {},
): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const asked = generation.current;
    try {
      const loaded = await latest.current();
      if (asked !== generation.current) return;
      setData(loaded);
      setError(undefined);
    } catch (failure) {
      if (asked === generation.current) setError(failure);
    }
  }, []);
  useEffect(() => {
    generation.current += 1;
    setData(undefined);
    setError(undefined);
    void reload();
  }, deps);
  const keepPolling = options.pollMs !== undefined && (options.poll?.(data) ?? true);
  useEffect(() => {
    if (!keepPolling) return;
    const timer = setInterval(() => void reload(), options.pollMs);
    return () => clearInterval(timer);
  }, [keepPolling, options.pollMs, ...deps]);
  return { data, error, reload };
}

export interface Action {
  busy: boolean;
  error: unknown;
  run: (action: () => Promise<void>) => Promise<void>;
  /** Runs `step` as a button's action, then `after` (the reload of what it changed). */
  act: (step: () => Promise<unknown>) => void;
}

/** Runs one action of a button at a time, with its error; `after` follows each `act`. */
export function useAction(after?: () => Promise<void>): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }, []);
  const act = (step: () => Promise<unknown>) =>
    void run(async () => {
      await step();
      await after?.();
    });
  return { busy, error, run, act };
}

/** The time now, ticking every second while `live` (a running job's duration grows on the page). */
export function useNow(live: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!live) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);
  return live ? now : Date.now();
}
