import { isTerminal, type JobState } from "../../../shared/contract/index.js";
import { parseJobKey, siblingJobKey } from "../../../shared/records/index.js";
import type { JobRevision, JobRevisionListener } from "../partitions/job-revision.js";

/** A parent's end as the watch delivered it: its terminal state, or null when its record was deleted. */
export type ParentEnd = JobState | null;

/**
 * The queued jobs waiting for jobs of their `depends_on`, by the job they wait for, kept
 * by every replica from its job watch. It is fed by the waiting jobs' own records
 * (`waiting_on`), never by the parents' `dependents`, so a submit that stopped between
 * writing the job and telling its parents loses nothing. A job waits for jobs of its own
 * business only: a parent's key is the child's key with the parent's id.
 */
export class WaitingJobs implements JobRevisionListener {
  readonly #children = new Map<string, { revision: number; parents: string[] }>();
  readonly #byParent = new Map<string, Set<string>>();

  /**
   * `onParentEnded`: a job that others wait for is terminal (or deleted): they are due to
   * be settled; `dependents` are the ids its record names (in any partition).
   */
  constructor(
    private readonly onParentEnded: (parentKey: string, end: ParentEnd, dependents: readonly string[]) => void = () =>
      undefined,
  ) {}

  get size(): number {
    return this.#children.size;
  }

  apply({ key, revision, record }: JobRevision): void {
    // One map lookup and one length for the ordinary job: only a job others wait for is looked at further.
    const dependents = Array.isArray(record?.dependents) ? (record.dependents as unknown[]) : [];
    if (this.#byParent.has(key) || dependents.length > 0) {
      const state = typeof record?.state === "string" ? (record.state as JobState) : null;
      if (record === null || (state !== null && isTerminal(state)))
        this.onParentEnded(
          key,
          state,
          dependents.filter((id): id is string => typeof id === "string"),
        );
    }
    const known = this.#children.get(key);
    if (known && known.revision >= revision) return;
    const waitingOn =
      record?.state === "queued" && Array.isArray(record.waiting_on) ? (record.waiting_on as unknown[]) : [];
    if (known) this.forget(key, known.parents);
    if (waitingOn.length === 0) return;
    const parents = waitingOn.filter((id): id is string => typeof id === "string").map((id) => siblingJobKey(key, id));
    this.#children.set(key, { revision, parents });
    for (const parent of parents) {
      let children = this.#byParent.get(parent);
      if (!children) this.#byParent.set(parent, (children = new Set()));
      children.add(key);
    }
  }

  dropPartition(partition: number): void {
    for (const [key, { parents }] of [...this.#children])
      if (parseJobKey(key)?.partition === partition) this.forget(key, parents);
  }

  /** The jobs waiting for this one. */
  childrenOf(parentKey: string): string[] {
    return [...(this.#byParent.get(parentKey) ?? [])];
  }

  /** Every waiting job and the keys of the jobs it waits for (a copy: settling them changes the index). */
  entries(): Array<{ childKey: string; parentKeys: string[] }> {
    return [...this.#children].map(([childKey, { parents }]) => ({ childKey, parentKeys: parents }));
  }

  private forget(key: string, parents: readonly string[]): void {
    this.#children.delete(key);
    for (const parent of parents) {
      const children = this.#byParent.get(parent);
      children?.delete(key);
      if (children?.size === 0) this.#byParent.delete(parent);
    }
  }
}
