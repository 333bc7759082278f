import { KvWatchInclude, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { isId, type RouteAuth } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { Clock } from "../../../shared/runtime/index.js";
import type { TokenIssuer } from "./access-tokens.js";
import { hasExpired } from "./api-key-expiry.js";
import { apiKeyMatches, parseApiKey } from "./api-key-format.js";
import { bearerToken } from "./bearer-token.js";
import type { IdentityStore } from "./identity-store.js";
import { InvalidatedCache } from "./invalidated-cache.js";
import type { ApiKeyRecord, AppRecord, SessionRecord, UserRecord } from "./records.js";
import { endedByUser } from "./sessions.js";
import { isDisabled, lowerRole } from "./users.js";

/** Who is calling, as every handler sees it. */
export interface Caller {
  app_id: string;
  business_id: string;
  user_id: string;
  role: "admin" | "member";
  credential:
    | { kind: "jwt"; session_id: string }
    | { kind: "api_key"; key_id: string; key: ApiKeyRecord }
    | { kind: "node_key"; key_id: string; node_id: string };
}

export interface CredentialHeaders {
  authorization?: string | undefined;
  apiKey?: string | undefined;
}

/** Where a request came from, as fastify resolved it: recorded as a key's last use. */
export interface RequestOrigin {
  ip: string;
}

/** How often `last_used_at` of a key is written, at most. */
const LAST_USED_RESOLUTION_MS = 60_000;

const invalid = (message: string) => new AppError("auth.invalid_credentials", message);

/**
 * Resolves the application and the caller of a request. Apps, keys, sessions and users are
 * cached per replica; every replica watches the buckets over NATS and evicts an entry the
 * moment its record changes, so a revoked key or ended session is refused everywhere
 * without waiting for a TTL. A watch whose consumer died with its NATS node is silent
 * until the client makes it again (about a minute, decision 0085), so an entry is also
 * read again once it is `cacheMaxAgeMs` old: the bound on a missed change. While NATS is
 * unreachable nothing is served from the cache.
 */
export class Authenticator {
  private readonly apps: InvalidatedCache<AppRecord>;
  private readonly keys: InvalidatedCache<ApiKeyRecord>;
  private readonly sessions: InvalidatedCache<SessionRecord>;
  private readonly users: InvalidatedCache<UserRecord>;
  private readonly lastUsedWrites = new Map<string, number>();
  private readonly watchers: Array<{ stop(): void }> = [];
  private connected = true;

  constructor(
    private readonly deps: {
      nc: NatsConnection;
      store: IdentityStore;
      tokens: TokenIssuer;
      clock: Clock;
      logger: Logger;
      /** How long a cached record is trusted without its watch saying it changed (`CJS_IDENTITY_CACHE_MAX_AGE_SECONDS`). */
      cacheMaxAgeMs: number;
    },
  ) {
    const options = { maxAgeMs: deps.cacheMaxAgeMs, now: () => deps.clock.now() };
    this.apps = new InvalidatedCache(options);
    this.keys = new InvalidatedCache(options);
    this.sessions = new InvalidatedCache(options);
    this.users = new InvalidatedCache(options);
  }

  async start(): Promise<void> {
    const { store } = this.deps;
    await Promise.all([
      this.watch(store.apps.kv, this.apps),
      this.watch(store.apiKeys.kv, this.keys),
      this.watch(store.sessions.kv, this.sessions),
      this.watch(store.users.kv, this.users),
    ]);
    void (async () => {
      for await (const status of this.deps.nc.status()) {
        if (status.type === "disconnect") this.connected = false;
        if (status.type === "reconnect") this.connected = true;
        if (status.type === "disconnect" || status.type === "reconnect") this.clearCaches();
      }
    })();
  }

  stop(): void {
    for (const watcher of this.watchers) watcher.stop();
  }

  /** Drops a key's cached record at once (the replica that revoked it does not wait for the watch). */
  forgetKey(keyId: string): void {
    this.keys.evict(keyId);
  }

  forgetSession(sessionId: string): void {
    this.sessions.evict(sessionId);
  }

  /** Drops a user's cached record at once (the replica that changed it does not wait for the watch). */
  forgetUser(userId: string): void {
    this.users.evict(userId);
  }

  /** The application named by `X-App-ID`. */
  async resolveApp(header: string | undefined): Promise<AppRecord> {
    if (header === undefined || header === "")
      throw new AppError("app.missing", "Send the X-App-ID header with your application id.");
    if (!isId("app", header)) throw new AppError("app.unknown", "X-App-ID does not name a known application.");
    const app = await this.cached(this.apps, header, () => this.deps.store.apps.get(header));
    if (!app) throw new AppError("app.unknown", "X-App-ID does not name a known application.");
    return app;
  }

  /** The caller of a route that needs a credential; `null` for public routes. */
  async authenticate(
    app: AppRecord,
    headers: CredentialHeaders,
    auth: RouteAuth,
    origin: RequestOrigin,
  ): Promise<Caller | null> {
    if (auth === "public") return null;
    const { authorization, apiKey } = headers;
    if (authorization !== undefined && apiKey !== undefined)
      throw invalid("Send one credential: Authorization or X-API-Key, not both.");
    if (authorization !== undefined) {
      if (auth === "node")
        throw new AppError(
          "permission.denied",
          "This operation takes the node's own key (X-API-Key, returned by register).",
        );
      return this.fromBearer(app, authorization);
    }
    if (apiKey !== undefined) {
      if (auth === "jwt")
        throw new AppError(
          "auth.jwt_required",
          "This operation needs a signed-in session (Authorization: Bearer); an API key cannot perform it.",
        );
      const caller = await this.fromApiKey(app, apiKey, origin);
      if (caller.credential.kind === "node_key" && auth === "user") {
        throw new AppError("permission.denied", "A node key works only on node-plane operations.");
      }
      if (caller.credential.kind === "api_key" && auth === "node") {
        throw new AppError(
          "permission.denied",
          "This operation takes the node's own key (returned by register), not a user's key.",
        );
      }
      return caller;
    }
    throw new AppError("auth.missing_credentials", "Send Authorization: Bearer <token> or X-API-Key: <key>.");
  }

  private async fromBearer(app: AppRecord, authorization: string): Promise<Caller> {
    const token = bearerToken(authorization);
    if (token === undefined) throw invalid("The Authorization header must be `Bearer <token>`.");
    const claims = await this.deps.tokens.verify(token);
    if (claims.app_id !== app.app_id) throw invalid("The bearer token belongs to another application.");
    if (!isId("session", claims.sid)) throw invalid("The bearer token names no session.");
    const session = await this.cached(this.sessions, claims.sid, () => this.deps.store.sessions.get(claims.sid));
    if (!session || session.ended_at !== null || Date.parse(session.expires_at) <= this.deps.clock.now()) {
      throw invalid("The session of this token has ended; sign in again.");
    }
    // The role and status come from the user's record as it is now, not from the token's claims.
    const user = await this.userOf(app, claims.sub);
    if (!user || session.user_id !== user.user_id || endedByUser(session, user))
      throw invalid("The session of this token has ended; sign in again.");
    return {
      app_id: user.app_id,
      business_id: user.business_id,
      user_id: user.user_id,
      role: user.role,
      credential: { kind: "jwt", session_id: claims.sid },
    };
  }

  private async fromApiKey(app: AppRecord, presented: string, origin: RequestOrigin): Promise<Caller> {
    const parsed = parseApiKey(presented.trim());
    if (!parsed) throw invalid("The API key is not valid.");
    const record = await this.cached(this.keys, parsed.keyId, () => this.deps.store.apiKeys.get(parsed.keyId));
    // Each check answers the same, so a caller learns nothing about which one failed.
    if (
      !record ||
      !apiKeyMatches(presented.trim(), record.key_hash) ||
      record.revoked_at !== null ||
      record.app_id !== app.app_id
    ) {
      throw invalid("The API key is not valid.");
    }
    if (hasExpired(record.expires_at, this.deps.clock.now())) {
      // Only the holder of the real key learns it expired; a node's rotated-out key answers as the agent expects.
      if (record.kind === "node") throw invalid("The API key is not valid.");
      throw new AppError("auth.key_expired", "This API key has expired; mint a new one.", {
        details: { expired_at: record.expires_at },
      });
    }
    const owner = {
      app_id: record.app_id,
      business_id: record.business_id,
      user_id: record.user_id,
      role: record.role,
    };
    // A node's key keeps working whatever becomes of the user who registered the node.
    if (record.kind === "node" && record.node_id !== null) {
      this.touch(record.key_id, origin.ip);
      return { ...owner, credential: { kind: "node_key", key_id: record.key_id, node_id: record.node_id } };
    }
    const user = await this.userOf(app, record.user_id);
    if (!user) throw invalid("The API key is not valid.");
    this.touch(record.key_id, origin.ip);
    return {
      ...owner,
      role: lowerRole(record.role, user.role),
      credential: { kind: "api_key", key_id: record.key_id, key: record },
    };
  }

  /** The user as it is now, or null when it is gone, of another app or disabled. */
  private async userOf(app: AppRecord, userId: string): Promise<UserRecord | null> {
    if (!isId("user", userId)) return null;
    const user = await this.cached(this.users, userId, () => this.deps.store.users.get(userId));
    return user && user.app_id === app.app_id && !isDisabled(user) ? user : null;
  }

  /** Records `last_used_at` and the address of that use, at most once a minute per key and replica, off the request path. */
  private touch(keyId: string, ip: string): void {
    const now = this.deps.clock.now();
    if (now - (this.lastUsedWrites.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWrites.set(keyId, now);
    this.deps.store.apiKeys
      .mutate(keyId, (key) =>
        key.revoked_at === null ? { ...key, last_used_at: new Date(now).toISOString(), last_used_ip: ip } : undefined,
      )
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, key_id: keyId }, "could not record last use of an API key"),
      );
  }

  private async cached<V>(
    cache: InvalidatedCache<V>,
    key: string,
    load: () => Promise<{ value: V } | null>,
  ): Promise<V | null> {
    try {
      if (!this.connected) return (await load())?.value ?? null;
      return await cache.get(key, async () => (await load())?.value ?? null);
    } catch (error) {
      this.deps.logger.warn({ err: error }, "identity lookup failed");
      throw new AppError("service.unavailable", "The identity store is unreachable; try again shortly.", {
        retryAfterSeconds: 1,
      });
    }
  }

  private async watch<V>(kv: KV, cache: InvalidatedCache<V>): Promise<void> {
    const watcher = await kv.watch({ include: KvWatchInclude.UpdatesOnly });
    this.watchers.push(watcher);
    void (async () => {
      for await (const entry of watcher) cache.evict(entry.key);
    })();
  }

  private clearCaches(): void {
    this.apps.clear();
    this.keys.clear();
    this.sessions.clear();
    this.users.clear();
  }
}
