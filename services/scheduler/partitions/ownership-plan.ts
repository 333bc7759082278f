import { createHash } from "node:crypto";
import { JOB_PARTITIONS } from "../../../shared/records/index.js";

/** A partition's claim as stored: which replica holds it, and the revision to compare-and-set on. */
export interface Claim {
  instance: string;
  revision: number;
}

/** What a replica does about one partition's claim: a compare-and-set each. */
export type OwnershipAction =
  | { kind: "claim"; partition: number }
  | { kind: "take"; partition: number; revision: number }
  | { kind: "release"; partition: number; revision: number };

/** A member's score for a partition (or a node): the first 32 bits of a SHA-256, so scores of different members are independent. */
function score(member: string, item: number | string): number {
  return createHash("sha256").update(`${member}/${item}`).digest().readUInt32BE(0);
}

/** The member that scores highest with `item` (rendezvous hashing), ties by name; undefined without members. */
export function rendezvousMember(item: string, members: readonly string[]): string | undefined {
  let best: { member: string; score: number } | undefined;
  for (const member of members) {
    const points = score(member, item);
    if (!best || points > best.score || (points === best.score && member < best.member))
      best = { member, score: points };
  }
  return best?.member;
}

/**
 * Which replica each partition belongs with, among `members`: rendezvous hashing (each
 * partition goes to the member that scores highest with it) bounded by load, so no member
 * gets more than its even share (the ceiling of partitions / members). Every replica that
 * sees the same members computes the same assignment, and a member joining or leaving
 * moves few partitions besides its own share.
 */
export function assignPartitions(members: readonly string[]): Map<number, string> {
  const assignment = new Map<number, string>();
  if (members.length === 0) return assignment;
  const cap = Math.ceil(JOB_PARTITIONS / members.length);
  const load = new Map<string, number>();
  for (let partition = 0; partition < JOB_PARTITIONS; partition += 1) {
    // One hash per member, not one per comparison of the sort.
    const ranked = members
      .map((member) => ({ member, points: score(member, partition) }))
      .sort((a, b) => b.points - a.points || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0))
      .map(({ member }) => member);
    const owner = ranked.find((member) => (load.get(member) ?? 0) < cap) ?? (ranked[0] as string);
    load.set(owner, (load.get(owner) ?? 0) + 1);
    assignment.set(partition, owner);
  }
  return assignment;
}

/** The replica a partition belongs with among `members` (`assignPartitions`). */
export function desiredOwner(partition: number, members: readonly string[]): string | undefined {
  return assignPartitions(members).get(partition);
}

/**
 * What `self` should do about every partition, from the live members (itself included)
 * and the claims as stored: claim a free partition that belongs with it, take over one
 * whose holder is no longer live, and release one that belongs with another live member
 * (which claims it once the release lands). A pure function: the caller applies each
 * action by compare-and-set, and a replica whose picture is stale only loses a write.
 */
export function planOwnership(
  self: string,
  live: ReadonlySet<string>,
  claims: ReadonlyMap<number, Claim>,
): OwnershipAction[] {
  const assignment = assignPartitions([...live]);
  const actions: OwnershipAction[] = [];
  for (let partition = 0; partition < JOB_PARTITIONS; partition += 1) {
    const want = assignment.get(partition);
    const claim = claims.get(partition);
    if (!claim) {
      if (want === self) actions.push({ kind: "claim", partition });
    } else if (claim.instance === self) {
      if (want !== self && want !== undefined) actions.push({ kind: "release", partition, revision: claim.revision });
    } else if (!live.has(claim.instance) && want === self) {
      actions.push({ kind: "take", partition, revision: claim.revision });
    }
  }
  return actions;
}

/** The partitions `self` holds a claim on. */
export function heldBy(self: string, claims: ReadonlyMap<number, Claim>): Set<number> {
  return new Set([...claims].filter(([, claim]) => claim.instance === self).map(([partition]) => partition));
}

/** Partitions no live member holds: free, or held by one that is gone. */
export function unownedPartitions(live: ReadonlySet<string>, claims: ReadonlyMap<number, Claim>): number[] {
  const unowned: number[] = [];
  for (let partition = 0; partition < JOB_PARTITIONS; partition += 1) {
    const claim = claims.get(partition);
    if (!claim || !live.has(claim.instance)) unowned.push(partition);
  }
  return unowned;
}
