import type { Clock } from "../../shared/runtime/index.js";

/** A clock a test moves by hand, so time-based behaviour is tested without waiting. */
export class ManualClock implements Clock {
  constructor(private nowMs: number = Date.now()) {}

  now(): number {
    return this.nowMs;
  }

  advance(ms: number): void {
    this.nowMs += ms;
  }
}
