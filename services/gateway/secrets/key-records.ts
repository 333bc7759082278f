import { z } from "zod";

/**
 * The records of the `cjs_signing_keys` bucket. Each kind of secret is one record, so a
 * rotation is one compare-and-set. They pass unknown fields through: a replica of another
 * version rewrites them without erasing what it does not know. A replica of the version
 * before key rotation reads the signing fields it knows and ignores `retired`.
 */
const RetiredEnd = { not_after: z.iso.datetime({ offset: true }) };

/** Key `current`: the Ed25519 key pair access tokens are signed with, and the retired public keys. */
export const SigningKeyRecord = z.looseObject({
  kid: z.string(),
  alg: z.literal("EdDSA"),
  private_jwk: z.record(z.string(), z.unknown()),
  public_jwk: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  /** Earlier keys, which verify the tokens they signed until `not_after`. */
  retired: z
    .array(z.looseObject({ kid: z.string(), public_jwk: z.record(z.string(), z.unknown()), ...RetiredEnd }))
    .optional(),
});
export type SigningKeyRecord = z.infer<typeof SigningKeyRecord>;

/**
 * Key `url-hmac`: the HMAC secret URLs are signed with (base64url). A secret without `kid`
 * was made before URLs named their key: its URLs carry no `kid` parameter, and it keeps
 * the empty id once retired.
 */
export const UrlSigningKeyRecord = z.looseObject({
  secret: z.string(),
  created_at: z.string(),
  kid: z.string().optional(),
  retired: z.array(z.looseObject({ kid: z.string(), secret: z.string(), ...RetiredEnd })).optional(),
});
export type UrlSigningKeyRecord = z.infer<typeof UrlSigningKeyRecord>;
