import { exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK } from "jose";
import { AppError } from "../../../shared/errors/index.js";
import { randomBase62, type Clock } from "../../../shared/runtime/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import type { SigningKeyRecord } from "./records.js";

const SIGNING_KEY_NAME = "current";
const ALG = "EdDSA";

/** What an access token asserts about its holder. */
export interface AccessClaims {
  /** The user id. */
  sub: string;
  app_id: string;
  business_id: string;
  role: "admin" | "member";
  /** The sign-in session (refresh-token family) the token belongs to. */
  sid: string;
}

export interface TokenIssuerOptions {
  issuer: string;
  audience: string;
  ttlSeconds: number;
  clock: Clock;
}

export interface TokenIssuer {
  readonly ttlSeconds: number;
  issue(claims: AccessClaims): Promise<string>;
  /** The claims of a valid token; `auth.invalid_credentials` for anything else. */
  verify(token: string): Promise<AccessClaims>;
  /** The public keys, as served at `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] };
}

/**
 * Loads the Ed25519 signing key every gateway replica shares, creating it on first start.
 * Replicas racing on first start all end up with the one key that won the KV create.
 */
async function loadSigningKey(bucket: JsonBucket<typeof SigningKeyRecord>, clock: Clock): Promise<SigningKeyRecord> {
  const existing = await bucket.get(SIGNING_KEY_NAME);
  if (existing) return existing.value;
  const { privateKey, publicKey } = await generateKeyPair(ALG, { crv: "Ed25519", extractable: true });
  const kid = randomBase62(16);
  const record: SigningKeyRecord = {
    kid,
    alg: ALG,
    private_jwk: { ...(await exportJWK(privateKey)), kid, alg: ALG },
    public_jwk: { ...(await exportJWK(publicKey)), kid, alg: ALG, use: "sig" },
    created_at: new Date(clock.now()).toISOString(),
  };
  try {
    await bucket.create(SIGNING_KEY_NAME, record);
    return record;
  } catch (error) {
    const winner = await bucket.get(SIGNING_KEY_NAME);
    if (winner) return winner.value;
    throw error;
  }
}

export async function createTokenIssuer(bucket: JsonBucket<typeof SigningKeyRecord>, options: TokenIssuerOptions): Promise<TokenIssuer> {
  const record = await loadSigningKey(bucket, options.clock);
  const privateKey = (await importJWK(record.private_jwk as JWK, ALG)) as CryptoKey;
  const publicKey = (await importJWK(record.public_jwk as JWK, ALG)) as CryptoKey;
  const nowSeconds = () => Math.floor(options.clock.now() / 1000);

  return {
    ttlSeconds: options.ttlSeconds,
    async issue(claims) {
      const { sub, ...rest } = claims;
      return new SignJWT({ ...rest })
        .setProtectedHeader({ alg: ALG, kid: record.kid, typ: "JWT" })
        .setSubject(sub)
        .setIssuer(options.issuer)
        .setAudience(options.audience)
        .setIssuedAt(nowSeconds())
        .setExpirationTime(nowSeconds() + options.ttlSeconds)
        .setJti(randomBase62(16))
        .sign(privateKey);
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, publicKey, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms: [ALG],
          currentDate: new Date(options.clock.now()),
        });
        const { sub, app_id, business_id, role, sid } = payload as Record<string, unknown>;
        if (typeof sub !== "string" || typeof app_id !== "string" || typeof business_id !== "string" || typeof sid !== "string" || (role !== "admin" && role !== "member")) {
          throw new Error("claims missing");
        }
        return { sub, app_id, business_id, role, sid };
      } catch {
        throw new AppError("auth.invalid_credentials", "The bearer token is invalid or expired; sign in again or refresh it.");
      }
    },
    jwks: () => ({ keys: [record.public_jwk as JWK] }),
  };
}
