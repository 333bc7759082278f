import type { Logger } from "../../../shared/runtime/index.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { DueSchedules } from "./due-schedules.js";
import { fireDueSchedules } from "./fire-schedules.js";
import type { Schedules } from "./schedule-store.js";

/**
 * The schedules' timer on one replica: every replica keeps when each schedule is due (a
 * watch), and fires those of the job partitions it owns (`schedulePartitionOfKey`), so one
 * replica makes each schedule's jobs; a tick's job id makes a second maker harmless.
 * Passes never overlap.
 */
export class ScheduleFiring {
  readonly #due: DueSchedules;
  #timer: NodeJS.Timeout | undefined;
  #firing: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly ctx: SchedulerContext,
    private readonly schedules: Schedules,
    private readonly logger: Logger,
    /** Whether this replica fires the schedule under a key now. */
    private readonly fires: (key: string) => boolean,
  ) {
    this.#due = new DueSchedules(schedules);
  }

  async start(): Promise<void> {
    await this.#due.start();
    this.#timer = setInterval(() => void this.fireNow(), this.ctx.config.CJS_SCHEDULE_CHECK_INTERVAL_MS);
  }

  /** One pass now over the schedules this replica fires; resolves when it is over. */
  fireNow(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#firing ??= fireDueSchedules(this.ctx, this.schedules, this.#due, this.logger, this.fires)
      .then((pass) => {
        if (pass.made + pass.skipped + pass.refused > 0) this.logger.info(pass, "schedules fired");
      })
      .catch((error: unknown) => this.logger.warn({ err: error }, "schedule pass failed; the next one tries again"))
      .finally(() => {
        this.#firing = undefined;
      });
    return this.#firing;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#firing;
    this.#due.stop();
  }
}
