import { ErrorNote } from "../components/error-note.js";
import { Link } from "../components/link.js";
import { credits, when } from "../format.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

/** Plans, the business's subscription, checkout through the payment provider. */
export function BillingPage(props: { outcome: string | null }) {
  const subscription = useLoad(() => api().billing.subscription(), []);
  const plans = useLoad(() => api().billing.plans(), []);
  const action = useAction();

  // The provider's page sends the browser back here when the checkout ends.
  const back = (outcome: string) => `${location.origin}/billing?checkout=${outcome}`;
  const buy = (planId: string) =>
    void action.run(async () => {
      const checkout = await api().billing.checkout({
        plan_id: planId,
        success_url: back("done"),
        cancel_url: back("canceled"),
      });
      location.assign(checkout.checkout_url);
    });

  const current = subscription.data;
  return (
    <main>
      <h1>Billing</h1>
      {props.outcome === "done" ? (
        <p class="note" role="status">
          Checkout complete: the plan applies once the payment provider confirms it.
        </p>
      ) : null}
      {props.outcome === "canceled" ? (
        <p class="note" role="status">
          Checkout canceled: nothing was charged.
        </p>
      ) : null}
      <ErrorNote error={subscription.error ?? plans.error ?? action.error} />
      {current ? (
        <section class="card" aria-label="Subscription">
          <h2>Subscription</h2>
          <dl class="facts">
            <dt>Plan</dt>
            <dd data-testid="current-plan">{current.plan.name}</dd>
            <dt>Status</dt>
            <dd>{current.status}</dd>
            <dt>Period</dt>
            <dd>
              {when(current.current_period_start)} to {when(current.current_period_end)}
            </dd>
            <dt>Credit balance</dt>
            <dd>{credits(current.credit_balance)}</dd>
            <dt>Used this period</dt>
            <dd>{credits(current.usage_this_period)}</dd>
          </dl>
        </section>
      ) : null}
      <h2>Plans</h2>
      <ul class="plans">
        {plans.data?.plans.map((plan) => (
          <li class="card">
            <h3>{plan.name}</h3>
            <p>
              {plan.price === 0
                ? "Free"
                : `${plan.price.toLocaleString()} ${plan.currency.toUpperCase()} a ${plan.interval}`}
            </p>
            <p class="hint">
              {credits(plan.included_credit)} credits included each {plan.interval}
            </p>
            {current?.plan.id === plan.id ? (
              <p class="hint">Your plan</p>
            ) : plan.price > 0 ? (
              <button type="button" disabled={action.busy} onClick={() => buy(plan.id)}>
                Choose {plan.name}
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      <p class="hint">
        The credit ledger and each key's spend are under <Link href="/usage">Usage</Link>.
      </p>
    </main>
  );
}
