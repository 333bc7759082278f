/** The pause after the `tries`-th failed try (from 1): the schedule's entry for it, or its last entry past the end. */
export function pauseAfterSeconds(schedule: readonly number[], tries: number): number {
  return schedule[Math.min(Math.max(tries, 1), schedule.length) - 1] ?? 3600;
}
