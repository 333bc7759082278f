import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * The portal's build: Preact's JSX through Vite's own transform (no plugin), every asset
 * hashed under /assets/, no inline script or style so the gateway's strict CSP holds.
 */
export default defineConfig({
  root,
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: "es2022",
  },
});
