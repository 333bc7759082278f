import { describe, expect, it } from "vitest";
import {
  addToWindow,
  type HourWindow,
  pruneWindow,
  removeFromWindow,
  roomAt,
  secondsUntilRoom,
  WINDOW_SECONDS,
  windowCount,
} from "./hour-window.js";

const T = 1_800_000_000_000; // a whole second
const at = (seconds: number, ms = 0) => T + seconds * 1000 + ms;

function fill(times: number[]): HourWindow {
  return times.reduce<HourWindow>((window, time) => addToWindow(window, time), []);
}

describe("hour window", () => {
  it("counts events per whole second, oldest first", () => {
    const window = fill([at(0), at(0, 999), at(1), at(5, 500)]);
    expect(window).toEqual([
      [T / 1000, 2],
      [T / 1000 + 1, 1],
      [T / 1000 + 5, 1],
    ]);
    expect(windowCount(window, at(5, 500))).toBe(4);
  });

  it("keeps an event for 3600 whole seconds: it leaves when second s + 3600 begins", () => {
    const window = fill([at(0, 700)]);
    expect(windowCount(window, at(WINDOW_SECONDS - 1, 999))).toBe(1);
    expect(windowCount(window, at(WINDOW_SECONDS))).toBe(0);
    expect(pruneWindow(window, at(WINDOW_SECONDS))).toEqual([]);
  });

  it("prunes what left the window when it adds", () => {
    const window = fill([at(0), at(10), at(WINDOW_SECONDS + 5)]);
    expect(window).toEqual([
      [T / 1000 + 10, 1],
      [T / 1000 + WINDOW_SECONDS + 5, 1],
    ]);
  });

  it("keeps seconds in order when a clock behind the last writer's adds", () => {
    expect(fill([at(10), at(3), at(10)])).toEqual([
      [T / 1000 + 3, 1],
      [T / 1000 + 10, 2],
    ]);
  });

  it("takes one event back, and drops the second once empty", () => {
    const window = fill([at(0), at(0), at(2)]);
    expect(removeFromWindow(window, at(0, 300))).toEqual([
      [T / 1000, 1],
      [T / 1000 + 2, 1],
    ]);
    expect(removeFromWindow(removeFromWindow(window, at(0)), at(0))).toEqual([[T / 1000 + 2, 1]]);
    expect(removeFromWindow(window, at(7))).toEqual(window);
  });

  it("says 0 seconds until room while under the limit", () => {
    expect(secondsUntilRoom(fill([at(0), at(1)]), at(2), 3)).toBe(0);
    expect(roomAt(fill([at(0), at(1)]), at(2), 3)).toBe(at(2));
  });

  it("at the limit, waits until the oldest event leaves, in whole seconds rounded up", () => {
    const window = fill([at(0, 100), at(20), at(40)]);
    expect(secondsUntilRoom(window, at(100, 250), 3)).toBe(WINDOW_SECONDS - 100);
    expect(roomAt(window, at(100, 250), 3)).toBe(at(WINDOW_SECONDS));
    expect(secondsUntilRoom(window, at(WINDOW_SECONDS - 1, 1), 3)).toBe(1);
    expect(secondsUntilRoom(window, at(WINDOW_SECONDS), 3)).toBe(0);
  });

  it("over the limit (a lowered limit), waits until enough events left", () => {
    const window = fill([at(0), at(10), at(20), at(30)]);
    expect(secondsUntilRoom(window, at(30), 2)).toBe(WINDOW_SECONDS + 20 - 30);
  });
});
