import type { Logger } from "pino";
import { ConfigError } from "../../../shared/runtime/index.js";
import { describeRing, type KeyRing, type LiveRing } from "./key-ring.js";
import { readKeyFile, type ConfiguredKeys, type KeyKind } from "./key-sources.js";
import { signingKeyReloadFailures } from "./signing-key-metrics.js";

/**
 * Re-reads a key file every `intervalMs` and swaps the ring when its text changed. Polling
 * the content, not watching the file, sees a Kubernetes secret volume's update (a symlink
 * swapped under the mount). A file that turns bad keeps the previous keys: the service
 * stays up on keys that worked, and the problem is logged once per bad content and counted.
 */
export function reloadKeyFile<K>(
  configured: ConfiguredKeys<K> & { path: string },
  kind: KeyKind<K>,
  live: LiveRing<K>,
  { logger, intervalMs }: { logger: Logger; intervalMs: number },
): { stop(): void } {
  const { path, variable } = configured;
  let seen = configured.text;
  const check = () => {
    let text: string | undefined;
    let ring: KeyRing<K>;
    try {
      text = readKeyFile(path, variable);
      if (text === seen) return;
      ring = kind.parse(text, variable);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      const fingerprint = text ?? error.message;
      if (fingerprint === seen) return;
      seen = fingerprint;
      signingKeyReloadFailures.inc({ kind: kind.name });
      logger.error(
        { kind: kind.name, problems: error.problems },
        "signing keys not reloaded; the previous keys stay in use",
      );
      return;
    }
    seen = text;
    live.replace(ring);
    logger.info({ kind: kind.name, source: variable, ...describeRing(ring) }, "signing keys reloaded");
  };
  const timer = setInterval(() => {
    try {
      check();
    } catch (error) {
      logger.error({ err: error, kind: kind.name }, "signing key file check failed");
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
