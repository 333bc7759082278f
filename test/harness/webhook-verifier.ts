import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const DOC = fileURLToPath(new URL("../../docs/webhooks.md", import.meta.url));

export type VerifyWebhook = (secret: string, signatureHeader: string, rawBody: string, nowSeconds?: number) => boolean;

/** The verification snippet of docs/webhooks.md, run as a user would paste it: the tests check deliveries with the documented code. */
export function documentedVerifier(): VerifyWebhook {
  const text = readFileSync(DOC, "utf8");
  const code = /## Verifying a delivery[\s\S]*?```js\n([\s\S]*?)```/.exec(text)?.[1];
  if (code === undefined) throw new Error('docs/webhooks.md has no ```js snippet under "Verifying a delivery"');
  return new Function("require", `${code}\nreturn verifyWebhook;`)(createRequire(import.meta.url)) as VerifyWebhook;
}
