/** One revision of a job record as the watch delivers it, decoded once for every listener. */
export interface JobRevision {
  /** The record's key (`jobKey`: `<partition>.<app>.<business>.<job id>`). */
  key: string;
  /** The KV revision: it grows with every write to the bucket, so a listener can ignore an older copy. */
  revision: number;
  /** The decoded record (unchecked JSON), or null when the key was deleted or purged. */
  record: Record<string, unknown> | null;
  /** The record's bytes, for cheap checks before a parse (`mayBeQueued`). */
  data: Uint8Array;
  /**
   * Set when this replica wrote the revision itself: `record` is then the job record as
   * written (made by the scheduler's own transitions, so of the record's shape), and needs
   * no check before use.
   */
  own?: true;
}

/** Something a replica keeps up to date from the job records: the active jobs, the queue, the list index. */
export interface JobRevisionListener {
  apply(revision: JobRevision): void;
  /** The replica gave the partition up (another replica owns it now): forget its jobs. */
  dropPartition(partition: number): void;
}
