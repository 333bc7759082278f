import type { CreditCheckCommand, CreditCheckReply, PlanRates, Resources } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { toCredits } from "../ledger/index.js";
import { chargeMicros } from "../metering/charge.js";
import type { CreditContext } from "./credit-context.js";
import { creditChecks } from "./credit-metrics.js";
import { budgetOf, keyBudgetRefusal } from "./key-budget.js";

/**
 * The submit's gate for a job on an operator pool: the plan's limits first (403
 * `plan.limit_exceeded`), then, for a billed plan, the balance (402
 * `resource.limit_reached` once it is zero or less), then the monthly budget of the API key
 * the attempt is charged to (402 `quota.key_budget_exhausted`; one more KV read, only for
 * a job submitted with a key). The operator's own business passes
 * without either: it is not billed. The scheduler never asks for a job on the business's
 * own pools.
 */
const HOUR_MS = 3_600_000;

/** The plan's rates and an hour of these resources at them, by the rule metering charges with. */
function pricing(rates: PlanRates, resources: Resources): Pick<CreditCheckReply, "rates" | "estimated_per_hour"> {
  return { rates, estimated_per_hour: toCredits(chargeMicros(HOUR_MS, resources, rates)) };
}

export function checkCredit(ctx: CreditContext) {
  return async ({ caller, body }: CreditCheckCommand): Promise<CreditCheckReply> => {
    const account = { app_id: caller.app_id, business_id: caller.business_id };
    const { plan, period } = await ctx.planOf(account);
    if (await ctx.isOperatorAccount(account)) {
      creditChecks.inc({ result: "allowed" });
      return {
        plan_id: plan.id,
        billed: false,
        balance: (await ctx.ledger.summary(account, period)).balance,
        ...pricing(plan.rates, body.resources),
      };
    }
    const { max_job_cpu, max_job_timeout_seconds } = plan.limits;
    if (body.resources.cpu > max_job_cpu) {
      creditChecks.inc({ result: "plan_limit" });
      throw new AppError(
        "plan.limit_exceeded",
        `The ${plan.name} plan allows at most ${max_job_cpu} CPU cores per job on operator pools.`,
        {
          details: { limit: "max_job_cpu", max: max_job_cpu, plan_id: plan.id },
        },
      );
    }
    if (body.timeout_seconds > max_job_timeout_seconds) {
      creditChecks.inc({ result: "plan_limit" });
      throw new AppError(
        "plan.limit_exceeded",
        `The ${plan.name} plan allows a timeout of at most ${max_job_timeout_seconds} s per job on operator pools.`,
        {
          details: { limit: "max_job_timeout_seconds", max: max_job_timeout_seconds, plan_id: plan.id },
        },
      );
    }
    const { balance, spent_by_key } = await ctx.ledger.summary(account, period);
    if (plan.billed && balance <= 0) {
      creditChecks.inc({ result: "limit_reached" });
      throw new AppError(
        "resource.limit_reached",
        "The business's compute credit is spent: jobs on operator pools are refused until credit is added. Jobs on the business's own pools still run.",
        { details: { balance, plan_id: plan.id } },
      );
    }
    if (caller.key_id !== null) {
      const budget = await budgetOf(ctx.apiKeys, account, caller.key_id);
      const refusal = keyBudgetRefusal(caller.key_id, budget, spent_by_key[caller.key_id] ?? 0, ctx.clock.now());
      if (refusal) {
        creditChecks.inc({ result: "key_budget" });
        throw refusal;
      }
    }
    creditChecks.inc({ result: "allowed" });
    return { plan_id: plan.id, billed: plan.billed, balance, ...pricing(plan.rates, body.resources) };
  };
}
