import { describe, expect, it } from "vitest";
import { OwnShare } from "./own-share.js";

const NODES = Array.from({ length: 60 }, (_, index) => `node_${index}`);

describe("OwnShare", () => {
  it("gives a replica placing alone every node", () => {
    const own = new OwnShare("a").among(["a"]);
    expect(NODES.every(own)).toBe(true);
  });

  it("gives each node to exactly one of the placing replicas, whatever order they are listed in", () => {
    const placers = ["a", "b", "c"];
    const tests = placers.map((self) => new OwnShare(self).among([...placers].reverse()));
    for (const nodeId of NODES) expect(tests.filter((isOwn) => isOwn(nodeId))).toHaveLength(1);
    // Spread, not all on one replica: each of the three gets some of 60 nodes.
    for (const isOwn of tests) expect(NODES.filter(isOwn).length).toBeGreaterThan(5);
  });

  it("moves only the leaving replica's nodes when the placers change", () => {
    const share = new OwnShare("a");
    const before = NODES.filter(share.among(["a", "b", "c"]));
    const after = NODES.filter(share.among(["a", "b"]));
    expect(after).toEqual(expect.arrayContaining(before));
    expect(NODES.filter(share.among(["a"]))).toEqual(NODES);
  });
});
