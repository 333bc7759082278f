import { AppError } from "../../../shared/errors/index.js";

/** The budgets one stream counts against, each a count of streams open now on this replica. */
export type StreamLimit = "per_user" | "per_url" | "per_business";

export interface StreamBudgetLimits {
  per_user: number;
  per_url: number;
  per_business: number;
}

/** Who a stream counts for: its user and business, and the signed URL it was opened with (none with a credential). */
export interface StreamOwner {
  app_id: string;
  business_id: string;
  user_id: string;
  /** The URL's signature: each signed URL is a budget of its own. */
  url?: string | undefined;
}

const MESSAGES: Record<StreamLimit, string> = {
  per_user: "this user",
  per_url: "this signed URL",
  per_business: "this business",
};

/**
 * How many job log streams are open on this gateway replica, per user, per signed URL
 * and per business, and the limits on each. A stream takes a place in all of its budgets
 * or in none: one that would pass a limit is refused with 429
 * `logs.stream_limit_reached`, naming the limit. Counted per replica: a cluster-wide
 * count would need a shared record written twice per stream and a lease to recover a dead
 * replica's count, so a user behind a balancer over R replicas may hold up to R times the
 * limit (docs/decisions/0056).
 */
export class StreamBudget {
  private readonly open = new Map<string, number>();

  constructor(private readonly limits: StreamBudgetLimits) {}

  /** Takes a place for one stream; returns what gives it back (once). Throws when a budget is used up. */
  take(owner: StreamOwner): () => void {
    // The narrowest budget first: the refusal names the limit the caller can do something about.
    const keys: Array<[StreamLimit, string]> = [
      ...(owner.url === undefined ? [] : [["per_url", `s/${owner.url}`] as [StreamLimit, string]]),
      ["per_user", `u/${owner.app_id}/${owner.user_id}`],
      ["per_business", `b/${owner.app_id}/${owner.business_id}`],
    ];
    for (const [limit, key] of keys) {
      const max = this.limits[limit];
      if ((this.open.get(key) ?? 0) >= max)
        throw new AppError(
          "logs.stream_limit_reached",
          `${max} log streams are open at once for ${MESSAGES[limit]} on this gateway already; close one, or retry later.`,
          { retryAfterSeconds: 5, details: { limit, max } },
        );
    }
    for (const [, key] of keys) this.open.set(key, (this.open.get(key) ?? 0) + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      for (const [, key] of keys) {
        const left = (this.open.get(key) ?? 1) - 1;
        if (left <= 0) this.open.delete(key);
        else this.open.set(key, left);
      }
    };
  }
}
