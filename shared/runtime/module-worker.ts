import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/** What a worker thread runs: the module's file and the Node options the thread needs to load it. */
export interface ModuleWorkerFile {
  filename: string;
  execArgv: string[];
}

/**
 * The file a worker thread runs for one of our modules, named by its compiled URL
 * (`new URL("./x-worker.js", import.meta.url)`). The built service (`dist/`) has that file;
 * run from source (tsx in development and the bench, vitest in tests) only the `.ts` beside
 * it exists and a new thread has no TypeScript loader, so it gets tsx's, resolved from here
 * rather than from the working directory.
 */
export function moduleWorkerFile(compiled: URL): ModuleWorkerFile {
  if (existsSync(fileURLToPath(compiled))) return { filename: compiled.href, execArgv: [] };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return { filename: compiled.href.replace(/\.js$/, ".ts"), execArgv: ["--import", tsx] };
}
