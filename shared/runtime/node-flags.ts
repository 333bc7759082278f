/**
 * The V8 flags each program of the repository starts with, wherever it runs: the test
 * harness and the bench, the local cluster, and the image (deploy/docker/entrypoint.sh
 * keeps a copy that test/deploy/container-image.test.ts holds to this one). Decision 0089.
 */

/** Below this much old generation (MiB) the gateway's V8 skips full collections. */
const GATEWAY_OLD_SPACE_FLOOR_MIB = 256;

export function nodeFlagsOf(program: string): readonly string[] {
  // The gateway keeps about 50 MiB live, and V8 sized its old generation tightly around
  // that: a noisy tenant's log replays and requests then set off a full collection every
  // few seconds, each pausing every tenant's requests for 5 to 14 ms. A configured initial
  // old space is also the size below which V8 does not collect it in full.
  return program === "gateway" ? [`--initial-old-space-size=${GATEWAY_OLD_SPACE_FLOOR_MIB}`] : [];
}
