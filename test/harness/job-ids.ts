/**
 * A job id without its tag (its last character, set by the scheduler from the job's pool
 * and partition): what a schedule tick's id (`tickJobId`) and the job made for it share.
 */
export function untagged(jobId: string): string {
  return jobId.slice(0, -1);
}
