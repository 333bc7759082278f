import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Clock } from "../../shared/runtime/index.js";
import type { ArtifactBudget } from "./artifacts/artifact-budget.js";
import type { ArtifactStore } from "./artifacts/artifact-store.js";
import type { GatewayConfig } from "./config.js";
import type { UrlSigner } from "./http/signed-url.js";
import type { TokenIssuer } from "./identity/access-tokens.js";
import type { Authenticator } from "./identity/authenticator.js";
import type { IdempotencyStore } from "./idempotency/idempotency-store.js";
import type { IdentityStore } from "./identity/identity-store.js";
import type { LoginGuard } from "./identity/login-guard.js";
import type { OneTimeCodes, OtpPurpose } from "./identity/otp.js";
import type { Sessions } from "./identity/sessions.js";
import type { NodeCallBudget } from "./rate-limit/node-calls.js";
import type { RateLimiter } from "./rate-limit/rate-limiter.js";
import type { SigningKeys } from "./secrets/signing-keys.js";

/** Delivers a one-time code to an e-mail address (SMTP, or the dev outbox); `purpose` picks the wording (sign-in when absent). */
export type OtpSender = (to: string, code: string, purpose?: OtpPurpose) => Promise<void>;

/** Everything the gateway's handlers share; built once by `buildGateway`. */
export interface GatewayContext {
  config: Readonly<GatewayConfig>;
  nc: NatsConnection;
  logger: Logger;
  clock: Clock;
  store: IdentityStore;
  tokens: TokenIssuer;
  sessions: Sessions;
  guard: LoginGuard;
  otps: OneTimeCodes;
  authenticator: Authenticator;
  /** The access-token keys and URL-signing secrets, kept current while the gateway runs. */
  signingKeys: SigningKeys;
  /** Signs and checks URLs that authenticate by themselves (artifacts, log streams). */
  urls: UrlSigner;
  /** Artifact bytes (object store) and their per-job index. */
  artifacts: ArtifactStore;
  /** Each business's budget of artifact bytes stored, checked before an upload. */
  artifactBudget: ArtifactBudget;
  /** Per-user request limits, shared by every replica through NATS KV. */
  rateLimiter: RateLimiter;
  /** Per-node call budgets, on this replica. */
  nodeCalls: NodeCallBudget;
  /** The Idempotency-Key records of submits and retries, shared by every replica. */
  idempotency: IdempotencyStore;
  /** Absent when neither SMTP nor the dev outbox is configured. */
  sendOtp: OtpSender | undefined;
}
