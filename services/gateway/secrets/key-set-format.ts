import { z } from "zod";
import type { KeyRing } from "./key-ring.js";

/** A key id: short, URL-safe, so it fits a JWT header and a query parameter as it is. */
export const Kid = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a key id is 1 to 64 letters, digits, '-' or '_'");

/** What every key of a key set (file or environment) carries beside its material. */
export const KeyMarks = {
  kid: Kid,
  /** This key signs; without one marked, the first key does. */
  current: z.boolean().optional(),
  /** A retired key verifies until this instant; without it, until it leaves the set. */
  not_after: z.iso.datetime({ offset: true }).optional(),
};

type Marked = { kid: string; current?: boolean | undefined; not_after?: string | undefined };

/** Which key of a set signs: the one marked `current`, else the first. */
export function signerIndex(keys: readonly Marked[]): number {
  const marked = keys.findIndex((key) => key.current === true);
  return marked === -1 ? 0 : marked;
}

/** `{ "keys": [...] }` with unique ids, at most one `current`, and a signer that is not retired. */
export function keySetSchema<S extends z.ZodType<Marked>>(key: S) {
  return z.object({ keys: z.array(key).min(1, "lists no key") }).superRefine(({ keys }, ctx) => {
    const kids = keys.map(({ kid }) => kid);
    kids.forEach((kid, index) => {
      if (kids.indexOf(kid) !== index)
        ctx.addIssue({ code: "custom", path: ["keys", index, "kid"], message: `key id ${kid} is listed twice` });
    });
    if (keys.filter((each) => each.current === true).length > 1)
      ctx.addIssue({ code: "custom", path: ["keys"], message: "more than one key is marked current" });
    const signer = signerIndex(keys);
    if (keys[signer]?.not_after !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["keys", signer, "not_after"],
        message: "the signing key cannot have an end",
      });
  });
}

/** The ring a parsed key set describes, each key's material made by `material`. */
export function ringOf<T extends Marked, K>(keys: readonly T[], material: (key: T) => K): KeyRing<K> {
  const signer = signerIndex(keys);
  const ringKey = (key: T) => ({
    kid: key.kid,
    key: material(key),
    notAfterMs: key.not_after === undefined ? null : Date.parse(key.not_after),
  });
  return { signer: ringKey(keys[signer] as T), retired: keys.filter((_, index) => index !== signer).map(ringKey) };
}
