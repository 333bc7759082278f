import pino from "pino";
import { describe, expect, it } from "vitest";
import { followOwnedPartitions } from "./follow-partitions.js";
import type { JobsWatch } from "./jobs-watch.js";

/** A watch that records what it is told to follow and is ready at once. */
function watchFollowing(partitions: number[], following: boolean) {
  const followed: number[][] = [];
  const watch = {
    following,
    partitions: new Set(partitions),
    async follow(next: ReadonlySet<number>) {
      followed.push([...next]);
      watch.partitions = new Set(next);
      watch.following = next.size > 0;
    },
    whenReady: async () => undefined,
  };
  return { watch: watch as unknown as JobsWatch, followed };
}

const logger = pino({ level: "silent" });

describe("following the partitions a replica owns", () => {
  it("does not read again the partitions its live feed already follows (taken back after a late renewal)", async () => {
    const { watch, followed } = watchFollowing([1, 2, 3], true);

    expect(
      await followOwnedPartitions(
        watch,
        () => new Set([3, 2, 1]),
        () => false,
        logger,
      ),
    ).toBe(true);

    expect(followed).toEqual([]);
  });

  it("follows a changed set, and the same set again when no feed reads it", async () => {
    const changed = watchFollowing([1, 2], true);
    await followOwnedPartitions(
      changed.watch,
      () => new Set([1, 2, 3]),
      () => false,
      logger,
    );
    const unfed = watchFollowing([1, 2], false);
    await followOwnedPartitions(
      unfed.watch,
      () => new Set([1, 2]),
      () => false,
      logger,
    );

    expect(changed.followed).toEqual([[1, 2, 3]]);
    expect(unfed.followed).toEqual([[1, 2]]);
  });
});
