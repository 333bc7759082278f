import type { BenchConfig, ScenarioName } from "./config.js";
import type { Cleanup } from "./cleanup.js";
import type { Progress } from "./progress.js";

/** What every scenario is given. */
export interface ScenarioContext {
  config: Readonly<BenchConfig>;
  cleanup: Cleanup;
  progress: Progress;
  /** Aborted on Ctrl-C: loops stop starting requests. */
  signal: AbortSignal;
}

/** One table of the report: rows of preformatted cells under `columns`. */
export interface ResultTable {
  title: string;
  columns: string[];
  rows: string[][];
  /** Printed under the table: settings that shape the numbers, caveats. */
  notes: string[];
}

export interface ScenarioOutcome {
  tables: ResultTable[];
  /** The same numbers unrounded, for `--json`. */
  data: unknown;
  /**
   * Why the run did not complete as designed (requests that failed, jobs that did not
   * finish). Any entry makes the bench exit non-zero; slowness never does.
   */
  failures: string[];
}

export interface Scenario {
  name: ScenarioName;
  title: string;
  run(context: ScenarioContext): Promise<ScenarioOutcome>;
}
