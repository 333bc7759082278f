import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files that start clusters, kill or race processes, or push thousands of jobs: they run
 * after the others, as many at once as there are cores, so a loaded machine does not turn
 * their generous waits into failures.
 */
const HEAVY = [
  "test/integration/cluster-*.test.ts",
  "test/integration/*-kill.test.ts",
  "test/integration/scheduler-races.test.ts",
  "test/integration/gateway-restart.test.ts",
  "test/integration/queue-order.test.ts",
  "test/integration/billing-backlog.test.ts",
  "test/integration/placement-round-failure.test.ts",
  // Kills the NATS node that leads the rate limiter's counters on a 3-node cluster.
  "test/integration/rate-limits-contention.test.ts",
];

/**
 * The longest files of the first group, started before the others whatever vitest's cache
 * says (a fresh checkout has none, and vitest then starts the largest files first): one of
 * them started last would be the run's tail.
 */
const LONGEST_FIRST = [
  "test/contract/schemathesis.test.ts",
  "test/integration/cli.test.ts",
  "test/integration/config-errors.test.ts",
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

const cores = availableParallelism();

export default defineConfig({
  test: {
    // Integration tests start a real nats-server per file (see test/harness/nats-server.ts).
    testTimeout: 30_000,
    // The programs tests start, bundled once for the run (test/harness/programs.ts).
    globalSetup: ["test/harness/programs.ts"],
    // expect.poll waits for a state the system reaches: its bound guards a hang, not a speed. Vitest's 1 s default
    // failed a portal test once when a fresh page took longer to sign in and list on a busy 2-core machine.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 60_000,
    // Child processes rather than threads: a test file's servers die with its process.
    pool: "forks",
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          include: [
            "shared/**/*.test.ts",
            "services/**/*.test.ts",
            "clients/**/*.test.ts",
            "deploy/**/*.test.ts",
            "test/**/*.test.ts",
          ],
          exclude: [...configDefaults.exclude, ...HEAVY],
          // Most files wait on servers and child processes rather than compute: twice the cores (at least 4) keeps
          // the machine busy (vitest's default, one less than the cores, runs one file at a time on 2 cores).
          maxWorkers: Math.max(4, 2 * cores),
          // One module cache per worker across its files (both groups): importing the services again for every file
          // took 374 s of the 12 minutes. Each file still starts its own servers and tenants.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "heavy",
          include: HEAVY,
          maxWorkers: Math.max(2, cores),
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
