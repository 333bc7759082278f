/**
 * Tests drive one user far faster than a person or a paced script would (dozens of requests
 * in one instant), so the per-second burst bound is out of their way unless a test sets it;
 * rate-limits.test.ts tests it. The minute and hour keep their defaults.
 */
export const TEST_BURST_LIMIT = { CJS_RATE_LIMIT_PER_SECOND: "1000000" } as const;
