/**
 * Milliseconds on the machine's monotonic clock (Linux CLOCK_MONOTONIC, through
 * `process.hrtime`): one timeline for every process on the machine, so a time taken in
 * the BullMQ worker process and one taken in the bench compare directly, to the microsecond.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
