import { defineConfig } from "tsdown";

/**
 * The published package: one ESM and one CommonJS file with their declarations, bundled
 * from src/index.ts. The contract's schemas the SDK uses are bundled in; nothing else of
 * shared/ (internal NATS commands, operator and node-plane contracts) is shipped.
 */
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  platform: "neutral",
  target: "es2022",
  dts: true,
  clean: true,
  outDir: "dist",
  tsconfig: "tsconfig.json",
  // Loaded only by a download, where Node.js has it; a browser never reaches that import.
  deps: { neverBundle: [/^node:/] },
});
