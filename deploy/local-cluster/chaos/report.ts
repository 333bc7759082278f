/** The soak's summary as printed at the end of `make chaos`. */
import { passed, type FaultRecovery, type FaultTiming, type Problem, type SoakAccount } from "./accounting.js";

const seconds = (ms: number | null) => (ms === null ? "—" : `${(ms / 1000).toFixed(1)} s`);
const SHOWN_PROBLEMS = 10;

function problems(title: string, list: readonly Problem[]): string[] {
  if (list.length === 0) return [];
  const shown = list.slice(0, SHOWN_PROBLEMS).map((problem) => `    ${problem.job_id}: ${problem.why}`);
  return [
    `  ${title}:`,
    ...shown,
    ...(list.length > SHOWN_PROBLEMS ? [`    … and ${list.length - SHOWN_PROBLEMS} more`] : []),
  ];
}

export function renderReport(options: {
  result: SoakAccount;
  faults: readonly { timing: FaultTiming; recovery: FaultRecovery }[];
  skipped: readonly string[];
  createdWithoutAck: number;
  /** Jobs each scheduler replica placed during the soak. */
  placements: ReadonlyMap<string, number>;
  elapsedMs: number;
}): string {
  const { result, faults, skipped } = options;
  const refused = Object.entries(result.refused)
    .map(([code, times]) => `${code} ×${times}`)
    .join(", ");
  const states = Object.entries(result.byState)
    .map(([state, times]) => `${state} ${times}`)
    .join(", ");
  const lines = [
    "",
    `chaos: ${passed(result) ? "PASSED" : "FAILED"} after ${seconds(options.elapsedMs)}`,
    "",
    `  submitted      ${result.submitted}`,
    `  acknowledged   ${result.acknowledged}${refused ? `   (refused: ${refused})` : ""}`,
    `  terminal       ${result.terminal}${states ? `   (${states})` : ""}`,
    `  lost           ${result.lost.length}`,
    `  doubled        ${result.doubled.length}`,
    `  charged once   ${result.chargedOnce} of ${result.chargeable} chargeable attempts   (uncharged ${result.uncharged.length}, overcharged ${result.overcharged.length})`,
    ...(options.createdWithoutAck > 0
      ? [
          `  created without an answer to the submit: ${options.createdWithoutAck} (the client timed out; not counted above)`,
        ]
      : []),
    `  placed by      ${[...options.placements].map(([replica, count]) => `${replica} ${count}`).join(", ") || "—"}   (each replica's counter, read between faults: a placement just before a kill can go uncounted)`,
    "",
    "  fault (kill -9, restart after 3 s)   ready again   first success   recovery",
    ...faults.map(
      ({ timing, recovery }) =>
        `  ${timing.target.padEnd(36)} ${seconds(recovery.readyMs).padStart(11)}   ${seconds(recovery.firstSuccessMs).padStart(13)}   ${seconds(recovery.recoveryMs).padStart(8)}${timing.error ? `   (${timing.error})` : ""}`,
    ),
    ...(skipped.length > 0 ? [`  not injected (out of time): ${skipped.join(", ")}`] : []),
    ...problems("lost", result.lost),
    ...problems("doubled", result.doubled),
    ...problems("uncharged", result.uncharged),
    ...problems("overcharged", result.overcharged),
    "",
  ];
  return lines.join("\n");
}
