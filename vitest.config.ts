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
  },
});
