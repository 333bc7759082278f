import { useEffect, useRef, useState } from "preact/hooks";
import type { PendingReason } from "../../../../shared/contract/index.js";
import type { DryRunResponse, RpcRequest } from "../../../sdk/src/index.js";
import { credits } from "../format.js";
import { pendingReasonWords, type WaitingJob } from "../pending-reason.js";
import { api } from "../session.js";
import { ErrorNote } from "./error-note.js";

type Body = Omit<RpcRequest<"submitJob">, "dry_run">;

/** Typing settles this long before the dry run is asked (each one counts against the rate limit). */
const SETTLE_MS = 400;
/** A dry run's figures are a picture of one moment: a submit asks again for one older than this. */
const FRESH_MS = 10_000;

/** Reasons no node would take the job however long it waits, unless the pool changes: worth a second look before submitting. */
export const STUCK_REASONS: ReadonlySet<PendingReason> = new Set([
  "no_nodes_in_pool",
  "no_node_with_type",
  "no_node_with_labels",
  "no_node_with_resources",
  "all_nodes_draining",
]);

export interface DryRun {
  plan: DryRunResponse | undefined;
  error: unknown;
  /** The dry run of exactly `body`, asked now unless the one shown is of it. */
  checkNow: () => Promise<DryRunResponse>;
}

/**
 * The dry run of a form's job (`jobs/submit` with `dry_run`), asked again once typing
 * settles: where the job would run, what it would cost, why it would wait or be refused.
 */
export function useDryRun(body: Body | undefined): DryRun {
  const key = body === undefined ? "" : JSON.stringify(body);
  const [shown, setShown] = useState<{ key: string; plan: DryRunResponse }>();
  const [error, setError] = useState<unknown>();
  // The last dry run asked, and when: a draft typed back to it, or a submit right after it, reuses it.
  const asked = useRef<{ key: string; at: number; answer: Promise<DryRunResponse> } | undefined>(undefined);
  const ask = (wanted: Body, wantedKey: string) => {
    const last = asked.current;
    let answer = last?.key === wantedKey && Date.now() - last.at < FRESH_MS ? last.answer : undefined;
    if (answer === undefined) {
      const fresh = api().jobs.dryRun(wanted);
      asked.current = { key: wantedKey, at: Date.now(), answer: fresh };
      // A failure is not kept: the next ask tries again.
      fresh.catch(() => {
        if (asked.current?.answer === fresh) asked.current = undefined;
      });
      answer = fresh;
    }
    return answer.then(
      (plan) => {
        setShown({ key: wantedKey, plan });
        setError(undefined);
        return plan;
      },
      (failure: unknown) => {
        setError(failure);
        throw failure;
      },
    );
  };
  useEffect(() => {
    if (body === undefined) return;
    const timer = setTimeout(() => void ask(body, key).catch(() => undefined), SETTLE_MS);
    return () => clearTimeout(timer);
  }, [key]);
  return {
    plan: shown?.key === key ? shown.plan : undefined,
    error,
    checkNow: () => (body === undefined ? Promise.reject(new Error("The form is not complete.")) : ask(body, key)),
  };
}

/** What the dry run says, in words. */
export function DryRunPanel(props: { dryRun: DryRun; job: WaitingJob | undefined }) {
  const { plan, error } = props.dryRun;
  return (
    <section class="card dry-run" aria-label="What would happen" data-testid="dry-run" aria-live="polite">
      <h2>Before you submit</h2>
      <ErrorNote error={error} />
      {props.job === undefined ? (
        <p class="hint">Fill in the type and the command to see where the job would run.</p>
      ) : null}
      {props.job !== undefined && plan === undefined && error === undefined ? <p class="hint">Checking…</p> : null}
      {props.job !== undefined && plan !== undefined ? (
        <ul>
          {plan.refusal ? (
            <li class="error" data-testid="dry-run-refusal">
              It would be refused: {plan.refusal.message} <code>{plan.refusal.code}</code>
            </li>
          ) : null}
          {plan.placement.pending_reason === null ? (
            <li data-testid="dry-run-placement">
              It would start at once on {plan.placement.nodes[0]?.node_id}
              {plan.placement.nodes.length > 1 ? ` (${plan.placement.nodes.length} nodes fit)` : ""}.
            </li>
          ) : (
            <li
              data-testid="dry-run-placement"
              class={STUCK_REASONS.has(plan.placement.pending_reason) ? "warning" : ""}
            >
              It would wait: {pendingReasonWords(plan.placement.pending_reason, props.job)}
            </li>
          )}
          <li data-testid="dry-run-cost">
            {plan.cost === null
              ? "Cost: none (the business's own pool is never charged)."
              : `Cost: about ${credits(plan.cost.estimated_per_hour)} credits an hour of running (plan ${plan.cost.plan_id}).`}
            {plan.credit ? ` Credit left: ${credits(plan.credit.remaining)}.` : ""}
          </li>
          {(plan.key_quota?.jobs_per_hour_left ?? null) !== null ? (
            <li>This key may submit {plan.key_quota?.jobs_per_hour_left} more jobs this hour.</li>
          ) : null}
        </ul>
      ) : null}
    </section>
  );
}
