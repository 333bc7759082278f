import { z } from "zod";
import { Timestamp } from "./common.js";

/** The gateway secrets an operator can rotate: access-token keys or URL-signing secrets. */
export const SigningKeyKind = z.enum(["jwt", "url"]);
export type SigningKeyKind = z.infer<typeof SigningKeyKind>;

/**
 * Operator command `keys rotate` (NATS only): a new signing key for `kind`, the current one
 * kept for verification until the last token or URL it signed has expired, or for
 * `keep_seconds` when given (0 refuses its tokens and URLs at once: for a leaked key).
 */
export const RotateKeysRequest = z.strictObject({
  kind: SigningKeyKind,
  keep_seconds: z
    .union([
      z.number().int().min(0),
      z
        .string()
        .regex(/^\d{1,9}$/, "a whole number of seconds")
        .transform(Number),
    ])
    .optional(),
});
export type RotateKeysRequest = z.infer<typeof RotateKeysRequest>;

export const RotateKeysResponse = z.object({
  kind: SigningKeyKind,
  /** The key that signs from now on. */
  kid: z.string(),
  /** The earlier keys that still verify, each until `not_after`. */
  retired: z.array(z.object({ kid: z.string(), not_after: Timestamp })),
});
export type RotateKeysResponse = z.infer<typeof RotateKeysResponse>;
