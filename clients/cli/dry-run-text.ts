import type { DryRunResponse } from "../sdk/src/index.js";
import type { CliContext } from "./context.js";
import { table } from "./output.js";

/** A dry run's answer for a person: whether the job would queue, where it would go, and what room is left. */
export function dryRunText(ctx: CliContext, answer: DryRunResponse): string {
  const { colors } = ctx;
  const lines: string[] = [];
  lines.push(
    answer.would_queue
      ? colors.bold("would queue")
      : `${colors.bold("would be refused")}: ${answer.refusal?.code ?? ""} ${answer.refusal?.message ?? ""}`.trimEnd(),
  );
  const { nodes, pending_reason } = answer.placement;
  lines.push(pending_reason ? `would wait   ${pending_reason}` : "would run    at once");
  if (nodes.length > 0) {
    lines.push(
      table(
        ["NODE", "POOL", "FREE SLOTS", "FREE CPU", "FREE MEMORY MB", "FREE GPU"],
        nodes.map((node) => [
          node.node_id,
          node.pool_id,
          String(node.free.slots),
          String(node.free.cpu),
          String(node.free.memory_mb),
          String(node.free.gpu),
        ]),
        colors,
      ).trimEnd(),
    );
  }
  lines.push(
    answer.cost
      ? `cost         ${answer.cost.estimated_per_hour} ${answer.cost.unit}/hour (plan ${answer.cost.plan_id})`
      : "cost         none (not an operator pool, or refused)",
  );
  if (answer.credit)
    lines.push(`credit left  ${answer.credit.remaining} credits${answer.credit.billed ? "" : " (not billed)"}`);
  if (answer.key_quota) {
    const left = (value: number | null) => (value === null ? "no limit" : String(value));
    lines.push(
      `key quota    ${left(answer.key_quota.jobs_per_hour_left)} jobs this hour, ${left(answer.key_quota.concurrent_jobs_left)} more at once`,
    );
  }
  if (answer.rate_limit)
    lines.push(
      `rate limit   ${answer.rate_limit.remaining} of ${answer.rate_limit.limit} requests left this ${answer.rate_limit.window} (resets in ${answer.rate_limit.reset_seconds} s)`,
    );
  return `${lines.join("\n")}\n`;
}
