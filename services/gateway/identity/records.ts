import { z } from "zod";
import { ApiKeySummary, App, Business, User } from "../../../shared/contract/index.js";

/**
 * Records the gateway keeps in JetStream KV. They are never sent to callers as they are.
 * Those the gateway rewrites are loose (docs/architecture.md, "Rolling upgrades").
 */
export const AppRecord = App;
export type AppRecord = z.infer<typeof AppRecord>;

export const BusinessRecord = Business;
export type BusinessRecord = z.infer<typeof BusinessRecord>;

export const UserRecord = User.extend({
  password_hash: z.string(),
  /** Sessions started under a lower generation have ended (a password change or reset, or disabling)… */
  session_generation: z.number().int().min(0).default(0),
  /** …except this one: the session that changed the password. */
  session_kept: z.string().nullable().default(null),
  /** What enabling a disabled user restores. */
  status_before_disable: z.enum(["active", "invited"]).optional(),
}).loose();
export type UserRecord = z.infer<typeof UserRecord>;

/** The index entry that makes an e-mail unique within an app. */
export const UserEmailRecord = z.object({ user_id: z.string() });

export const ApiKeyRecord = ApiKeySummary.omit({ spent_credits_this_month: true })
  .extend({
    /** A user's key, or a node's own key (minted by register and rotate-key). */
    kind: z.enum(["user", "node"]).default("user"),
    /** The node a node key belongs to. */
    node_id: z.string().nullable().default(null),
    /** The minting user's role when the key was made; the key acts with it. */
    role: z.enum(["admin", "member"]).default("member"),
    /** When the key stops working (a user's key past its expiry, a node's rotated-out key); null: never. */
    expires_at: z.string().nullable().default(null),
    /** A user key's scopes; null (and absent, in records older than scopes): every scope. Strings, so a scope added later survives an older replica. */
    scopes: z.array(z.string()).nullable().default(null),
    last_used_ip: z.string().nullable().default(null),
    budget_credits_per_month: z.number().nullable().default(null),
    app_id: z.string(),
    business_id: z.string(),
    /** The user who minted it (for a node key: who registered the node). */
    user_id: z.string(),
    /** SHA-256 of the whole key; the key itself is never stored. */
    key_hash: z.string(),
  })
  .loose();
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;

/** The business index entry of a user (the KV key says it all). */
export const BusinessUserRecord = z.object({});

/** The owner index entry of a key (the KV key says it all). */
export const ApiKeyOwnerRecord = z.object({});

/** A sign-in session: one refresh-token family. Each refresh replaces `token_hash`. */
export const SessionRecord = z.looseObject({
  session_id: z.string(),
  app_id: z.string(),
  user_id: z.string(),
  token_hash: z.string(),
  /** The user's `session_generation` when the session started (records of older versions: 0). */
  generation: z.number().int().min(0).default(0),
  /** Hashes of refresh tokens already traded in: presenting one again ends the session (but see `previous_hash`). */
  spent_hashes: z.array(z.string()),
  /** The hash of the token the last refresh spent, and when: presented again within the grace, it gets the same new token. */
  previous_hash: z.string().nullable().default(null),
  rotated_at: z.string().nullable().default(null),
  /** The current token's secret, sealed with a key only the previous token's secret gives (`sealSuccessor`). */
  successor_sealed: z.string().nullable().default(null),
  created_at: z.string(),
  expires_at: z.string(),
  ended_at: z.string().nullable(),
  end_reason: z.enum(["logout", "refresh_token_reused"]).nullable(),
});
export type SessionRecord = z.infer<typeof SessionRecord>;

export const OtpRecord = z.looseObject({
  code_hash: z.string(),
  expires_at: z.string(),
  tries_left: z.number().int(),
});
export type OtpRecord = z.infer<typeof OtpRecord>;

export const LoginGuardRecord = z.looseObject({
  failures: z.number().int(),
  /** Epoch ms before which the next try is refused (slowing down). */
  next_try_at: z.number(),
  /** Epoch ms until which every try is refused. */
  locked_until: z.number(),
});
export type LoginGuardRecord = z.infer<typeof LoginGuardRecord>;
