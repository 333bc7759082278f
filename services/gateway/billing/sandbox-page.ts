import type { SandboxSessionView } from "../../../shared/contract/index.js";

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char,
  );
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; color: #222; }
.card { border: 1px solid #ccc; border-radius: 8px; padding: 1.5rem; }
.price { font-size: 1.6rem; margin: 0.5rem 0 1rem; }
.note { color: #666; font-size: 0.9rem; }
button { font-size: 1rem; padding: 0.5rem 1.2rem; margin-right: 0.5rem; cursor: pointer; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

function formatPrice(price: number, currency: string): string {
  return `${price.toFixed(2)} ${currency.toUpperCase()}`;
}

/** The sandbox checkout page: the plan, its price, and Pay / Cancel posting back to the same path. */
export function checkoutPage(view: SandboxSessionView, notice?: string): string {
  const { plan } = view;
  return layout(
    `Checkout: ${plan.name}`,
    `<div class="card">
<h1>${escapeHtml(plan.name)}</h1>
<p class="price">${escapeHtml(formatPrice(plan.price, plan.currency))} / ${escapeHtml(plan.interval)}</p>
<p>Includes ${escapeHtml(String(plan.included_credit))} compute credits each ${escapeHtml(plan.interval)}.</p>
${notice ? `<p><strong>${escapeHtml(notice)}</strong></p>` : ""}
<form method="post">
<button type="submit" name="action" value="pay">Pay</button>
<button type="submit" name="action" value="cancel">Cancel</button>
</form>
<p class="note">Sandbox payment provider: no money moves. This page works until ${escapeHtml(view.expires_at)}.</p>
</div>`,
  );
}

/** A page for a session that cannot be used, or a step that failed. */
export function messagePage(title: string, message: string): string {
  return layout(title, `<div class="card"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></div>`);
}
