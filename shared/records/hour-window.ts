import { z } from "zod";

/** The length of a quota's sliding window, in whole seconds. */
export const WINDOW_SECONDS = 3600;

/**
 * Events of the last hour (submits of a key, assignments to a node), counted per whole
 * epoch second, oldest first: `[second, count]`. An event of second `s` counts until
 * second `s + 3600` begins, so a limit holds over any 3600 consecutive seconds. Counting
 * per second keeps the record small (at most 3600 pairs) whatever the limit, where a list
 * of timestamps would pass NATS's 1 MB message limit at high limits.
 */
export const HourWindow = z.array(z.tuple([z.number().int(), z.number().int().positive()]));
export type HourWindow = z.infer<typeof HourWindow>;

function secondOf(atMs: number): number {
  return Math.floor(atMs / 1000);
}

/** The window without the seconds that left it by `nowMs`. */
export function pruneWindow(window: HourWindow, nowMs: number): HourWindow {
  const first = secondOf(nowMs) - WINDOW_SECONDS + 1;
  return window.filter(([second]) => second >= first);
}

/** Events in the window at `nowMs`. */
export function windowCount(window: HourWindow, nowMs: number): number {
  return pruneWindow(window, nowMs).reduce((sum, [, count]) => sum + count, 0);
}

/** The window with one more event at `atMs`, pruned at the same time. */
export function addToWindow(window: HourWindow, atMs: number): HourWindow {
  const second = secondOf(atMs);
  const kept = pruneWindow(window, atMs);
  const last = kept[kept.length - 1];
  if (last && last[0] === second) return [...kept.slice(0, -1), [second, last[1] + 1]];
  if (last && last[0] > second) {
    // An event stamped by a clock behind the last writer's: kept in order.
    const merged = new Map(kept);
    merged.set(second, (merged.get(second) ?? 0) + 1);
    return [...merged.entries()].sort(([a], [b]) => a - b);
  }
  return [...kept, [second, 1]];
}

/** The window with one event of `atMs` taken back (an admission that was not used). */
export function removeFromWindow(window: HourWindow, atMs: number): HourWindow {
  const second = secondOf(atMs);
  return window.flatMap(
    ([at, count]): HourWindow => (at !== second ? [[at, count]] : count > 1 ? [[at, count - 1]] : []),
  );
}

/** When (epoch ms) the window will hold fewer than `limit` events; `nowMs` when it does now. */
export function roomAt(window: HourWindow, nowMs: number, limit: number): number {
  const kept = pruneWindow(window, nowMs);
  let excess = kept.reduce((sum, [, count]) => sum + count, 0) - limit + 1;
  if (excess <= 0) return nowMs;
  for (const [second, count] of kept) {
    excess -= count;
    if (excess <= 0) return (second + WINDOW_SECONDS) * 1000;
  }
  return nowMs + WINDOW_SECONDS * 1000;
}

/**
 * Whole seconds from `nowMs` until the window holds fewer than `limit` events: when the
 * oldest events that stand in the way leave it. 0 when there is room now.
 */
export function secondsUntilRoom(window: HourWindow, nowMs: number, limit: number): number {
  const at = roomAt(window, nowMs, limit);
  return at <= nowMs ? 0 : Math.max(1, Math.ceil((at - nowMs) / 1000));
}
