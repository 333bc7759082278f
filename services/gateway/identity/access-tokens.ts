import { errors, jwtVerify, SignJWT, type JWK } from "jose";
import { AppError } from "../../../shared/errors/index.js";
import { randomBase62, type Clock } from "../../../shared/runtime/index.js";
import { JWT_ALG, type JwtKey } from "../secrets/jwt-keys.js";
import { acceptedKey, type LiveRing } from "../secrets/key-ring.js";

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
  /**
   * The claims of a valid token; `auth.token_expired` for a genuine one past its `exp` (by
   * the injected clock), `auth.invalid_credentials` for anything else.
   */
  verify(token: string): Promise<AccessClaims>;
  /** The public keys that verify now (the current and the retired still accepted), as served at `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] };
}

/**
 * Access tokens signed with the current key of `keys`, their header naming it (`kid`).
 * A token verifies with the key its `kid` names while that key is accepted: the current
 * one, or a retired one until its end, so tokens made before a rotation keep working.
 */
export function createTokenIssuer(keys: LiveRing<JwtKey>, options: TokenIssuerOptions): TokenIssuer {
  const nowSeconds = () => Math.floor(options.clock.now() / 1000);
  const accepted = () => [
    keys.current.signer,
    ...keys.current.retired.filter(({ kid }) => acceptedKey(keys.current, kid, options.clock.now()) !== undefined),
  ];

  return {
    ttlSeconds: options.ttlSeconds,
    async issue(claims) {
      const { sub, ...rest } = claims;
      const { kid, key } = keys.current.signer;
      if (key.privateKey === null) throw new Error(`the signing key ${kid} has no private part`);
      return new SignJWT({ ...rest })
        .setProtectedHeader({ alg: JWT_ALG, kid, typ: "JWT" })
        .setSubject(sub)
        .setIssuer(options.issuer)
        .setAudience(options.audience)
        .setIssuedAt(nowSeconds())
        .setExpirationTime(nowSeconds() + options.ttlSeconds)
        .setJti(randomBase62(16))
        .sign(key.privateKey);
    },
    async verify(token) {
      try {
        const keyOf = ({ kid }: { kid?: string | undefined }) => {
          const key = kid === undefined ? undefined : acceptedKey(keys.current, kid, options.clock.now());
          if (key === undefined) throw new Error("no accepted key has this kid");
          return key.publicKey;
        };
        const { payload } = await jwtVerify(token, keyOf, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms: [JWT_ALG],
          currentDate: new Date(options.clock.now()),
        });
        const { sub, app_id, business_id, role, sid } = payload as Record<string, unknown>;
        if (
          typeof sub !== "string" ||
          typeof app_id !== "string" ||
          typeof business_id !== "string" ||
          typeof sid !== "string" ||
          (role !== "admin" && role !== "member")
        ) {
          throw new Error("claims missing");
        }
        return { sub, app_id, business_id, role, sid };
      } catch (error) {
        // jose checks `exp` only after the signature, issuer and audience hold: a forged or garbled token never reads as expired.
        if (error instanceof errors.JWTExpired)
          throw new AppError("auth.token_expired", "The bearer token has expired; refresh it or sign in again.");
        throw new AppError("auth.invalid_credentials", "The bearer token is invalid; sign in again or refresh it.");
      }
    },
    jwks: () => ({ keys: accepted().map(({ key }) => key.publicJwk) }),
  };
}
