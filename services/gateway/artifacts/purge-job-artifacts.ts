import type { PurgeJobDataCommand, PurgeJobDataReply } from "../../../shared/contract/index.js";
import type { ArtifactStore } from "./artifact-store.js";

/**
 * Removes every artifact of a job the scheduler is deleting (by its owner or by
 * retention): it decided the job's tenancy and state. Safe to repeat.
 */
export function purgeJobArtifacts(artifacts: ArtifactStore) {
  return async (job: PurgeJobDataCommand): Promise<PurgeJobDataReply> => ({ deleted: await artifacts.removeAll(job) });
}
