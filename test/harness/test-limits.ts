/**
 * Tests drive one user, and one node, far faster than a person, a paced script or an agent
 * would (dozens of requests in one instant, heartbeats in a loop), so the per-second bounds
 * are out of their way unless a test sets them; rate-limits.test.ts and
 * node-call-budget.test.ts test them. The minute and hour keep their defaults.
 */
export const TEST_BURST_LIMIT = {
  CJS_RATE_LIMIT_PER_SECOND: "1000000",
  CJS_NODE_RATE_LIMIT_PER_SECOND: "1000000",
  CJS_NODE_CONTROL_RATE_LIMIT_PER_SECOND: "1000000",
} as const;
