import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "shared/**/*.test.ts",
      "services/**/*.test.ts",
      "clients/**/*.test.ts",
      "deploy/**/*.test.ts",
      "test/**/*.test.ts",
    ],
    // Integration tests start a real nats-server per file (see test/harness/nats-server.ts).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Child processes rather than threads: a test file's servers die with its process.
    pool: "forks",
    // Most files wait on servers and child processes rather than compute: twice the cores (at least 4) keeps
    // the machine busy (vitest's default, one less than the cores, runs one file at a time on 2 cores).
    maxWorkers: Math.max(4, 2 * availableParallelism()),
  },
});
