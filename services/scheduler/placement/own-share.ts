import { rendezvousMember } from "../partitions/ownership-plan.js";

/**
 * Which nodes are this replica's own share: each node belongs with one of the replicas
 * that place (those holding partitions), by rendezvous hashing of its id, so replicas
 * placing side by side fill different nodes first and meet on a node's allocation record
 * only once their own nodes are full. With one replica placing, every node is its own.
 * A node's hash is computed once while the placers stay the same.
 */
export class OwnShare {
  #placers = "";
  readonly #own = new Map<string, boolean>();

  constructor(private readonly self: string) {}

  /** The test of a node being this replica's own, among `placers` (this one included when it places). */
  among(placers: readonly string[]): (nodeId: string) => boolean {
    const sorted = [...placers].sort();
    const key = sorted.join(" ");
    if (key !== this.#placers) {
      this.#placers = key;
      this.#own.clear();
    }
    return (nodeId) => {
      let own = this.#own.get(nodeId);
      if (own === undefined) {
        own = sorted.length <= 1 || rendezvousMember(nodeId, sorted) === this.self;
        this.#own.set(nodeId, own);
      }
      return own;
    };
  }
}
