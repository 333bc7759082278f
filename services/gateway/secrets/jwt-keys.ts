import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKeyInput,
  type KeyObject,
} from "node:crypto";
import type { JWK } from "jose";
import { z } from "zod";
import { randomBase62 } from "../../../shared/runtime/index.js";
import { KeyMarks, keySetSchema, ringOf, signerIndex } from "./key-set-format.js";
import type { KeyRing } from "./key-ring.js";

export const JWT_ALG = "EdDSA";

/** An Ed25519 key of the access tokens; a retired key given only by its public half cannot sign. */
export interface JwtKey {
  privateKey: KeyObject | null;
  publicKey: KeyObject;
  /** As served at `/.well-known/jwks.json`. */
  publicJwk: JWK;
}

/** Public and private halves of an Ed25519 JWK (RFC 8037); `d` only in a key that signs or may sign. */
const Ed25519Jwk = {
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  x: z.string().min(1),
  d: z.string().min(1).optional(),
};

/**
 * `CJS_JWT_SIGNING_KEYS(_FILE)`: a JWK Set of Ed25519 keys, each with a `kid`, and two
 * members of ours: `current` and `not_after`. Other JWK members (`alg`, `use`) are ignored.
 */
export const JwtKeySet = keySetSchema(z.looseObject({ ...Ed25519Jwk, ...KeyMarks })).superRefine(({ keys }, ctx) => {
  const signer = signerIndex(keys);
  if (keys.length > 0 && keys[signer]?.d === undefined)
    ctx.addIssue({
      code: "custom",
      path: ["keys", signer, "d"],
      message: "the signing key needs its private part (d)",
    });
});
export type JwtKeySet = z.infer<typeof JwtKeySet>;

/** The key a JWK (private or public) describes; throws when the bytes are not an Ed25519 key. */
export function jwtKeyFromJwk(jwk: Readonly<Record<string, unknown>>, kid: string): JwtKey {
  // Only the key's own members: `kid`, `current` and the like are not node's to read.
  const { kty, crv, x, d } = jwk;
  const material = { kty, crv, x, ...(d === undefined ? {} : { d }) } as JsonWebKeyInput["key"];
  const privateKey = d === undefined ? null : createPrivateKey({ key: material, format: "jwk" });
  const publicKey = privateKey ? createPublicKey(privateKey) : createPublicKey({ key: material, format: "jwk" });
  return {
    privateKey,
    publicKey,
    publicJwk: { ...publicKey.export({ format: "jwk" }), kid, alg: JWT_ALG, use: "sig" },
  };
}

export function jwtRingOf(set: JwtKeySet): KeyRing<JwtKey> {
  return ringOf(set.keys, (key) => jwtKeyFromJwk(key, key.kid));
}

/** A fresh key pair with a fresh id, as JWKs (the form the KV record keeps). */
export function generateJwtKey(): { kid: string; privateJwk: JWK; publicJwk: JWK } {
  const kid = randomBase62(16);
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    kid,
    privateJwk: { ...privateKey.export({ format: "jwk" }), kid, alg: JWT_ALG },
    publicJwk: { ...publicKey.export({ format: "jwk" }), kid, alg: JWT_ALG, use: "sig" },
  };
}
