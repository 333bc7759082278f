/** The soak's user (a customer business's admin, customer.ts), signed in through the load balancer, every call bounded in time. */
import { ApiError, ComputeClient, mayRetryCode } from "../../../shared/client/index.js";
import type { RpcName, RpcRequest, RpcResponse } from "../../../shared/contract/index.js";
import { setTimeout as delay } from "node:timers/promises";

const CALL_TIMEOUT_MS = 15_000;
/** Access tokens live 15 minutes by default; signing in again well before keeps every call authorised. */
const RESIGN_AFTER_MS = 10 * 60_000;
const RETRIES = 6;

/** A short word for a failed call: the envelope's code, the load balancer's status, or the transport's failure. */
export function errorCode(error: unknown): string {
  // No envelope: the load balancer answered itself (a 502 for a request its gateway died on, a 503 with no gateway up).
  if (error instanceof ApiError && /^HTTP \d{3}$/.test(error.message)) return `lb.http_${error.status}`;
  if (error instanceof ApiError) return error.code;
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return "client.timeout";
  return "client.network_error";
}

export class Session {
  #client: ComputeClient | undefined;
  #signedInAtMs = 0;

  constructor(private readonly options: { lbUrl: string; appId: string; email: string; password: string }) {}

  private base(): ComputeClient {
    return new ComputeClient({
      baseUrl: this.options.lbUrl,
      appId: this.options.appId,
      fetch: (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) }),
    });
  }

  private async client(): Promise<ComputeClient> {
    if (!this.#client || Date.now() - this.#signedInAtMs > RESIGN_AFTER_MS) {
      const base = this.base();
      const tokens = await base.call("login", { email: this.options.email, password: this.options.password });
      this.#client = base.with({ accessToken: tokens.access_token });
      this.#signedInAtMs = Date.now();
    }
    return this.#client;
  }

  /** One call, not retried: a submit is sent once, so an unanswered one is never doubled by the soak itself. */
  async once<N extends RpcName>(name: N, body: RpcRequest<N>): Promise<RpcResponse<N>> {
    return (await this.client()).call(name, body);
  }

  /** A read, retried (bounded) while the answer says a retry may help or the transport failed. */
  async read<N extends RpcName>(name: N, body: RpcRequest<N>): Promise<RpcResponse<N>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(name, body);
      } catch (error) {
        const retryable = !(error instanceof ApiError) || mayRetryCode(error.code);
        if (!retryable || attempt >= RETRIES) throw error;
        await delay(500 * attempt);
      }
    }
  }
}
