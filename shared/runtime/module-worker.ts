import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * Starts a worker thread on one of our modules, named by its compiled URL
 * (`new URL("./x-worker.js", import.meta.url)`). The built service (`dist/`) has that file;
 * run from source (tsx in development and the bench, vitest in tests) only the `.ts` beside
 * it exists and a new thread has no TypeScript loader, so it gets tsx's, resolved from here
 * rather than from the working directory.
 */
export function startModuleWorker(compiled: URL, options: WorkerOptions = {}): Worker {
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, options);
  const source = new URL(compiled.href.replace(/\.js$/, ".ts"));
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return new Worker(source, { ...options, execArgv: [...(options.execArgv ?? []), "--import", tsx] });
}
