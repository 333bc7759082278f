import { readFileSync } from "node:fs";
import type { z } from "zod";
import { ConfigError, formatPath } from "../../../shared/runtime/index.js";
import type { GatewayConfig } from "../config.js";
import { jwtRingOf, JwtKeySet, type JwtKey } from "./jwt-keys.js";
import type { KeyRing } from "./key-ring.js";
import { urlRingOf, UrlKeySet } from "./url-keys.js";

/** Keys given to the gateway instead of kept in NATS KV: from a file (re-read while running) or a variable. */
export interface ConfiguredKeys<K> {
  /** The setting they came from, named in every problem. */
  variable: string;
  /** The file to re-read; null for keys given in the environment. */
  path: string | null;
  /** The file's text the ring was made from, to tell a change. */
  text: string;
  ring: KeyRing<K>;
}

/** How one kind of secret is read from its text, and which settings give it. */
export interface KeyKind<K> {
  name: "jwt" | "url";
  envVariable: "CJS_JWT_SIGNING_KEYS" | "CJS_URL_SIGNING_KEYS";
  fileVariable: "CJS_JWT_SIGNING_KEYS_FILE" | "CJS_URL_SIGNING_KEYS_FILE";
  parse(text: string, variable: string): KeyRing<K>;
}

function parser<S extends z.ZodType, K>(schema: S, toRing: (set: z.infer<S>) => KeyRing<K>) {
  return (text: string, variable: string): KeyRing<K> => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // The parser's message quotes the text, which is a secret.
      throw new ConfigError([`${variable}: is not valid JSON`]);
    }
    const result = schema.safeParse(json);
    if (!result.success)
      throw new ConfigError(
        result.error.issues.map((issue) => `${variable}: ${formatPath(issue.path) || "(key set)"}: ${issue.message}`),
      );
    try {
      return toRing(result.data);
    } catch {
      throw new ConfigError([`${variable}: a key is not a valid key of its kind`]);
    }
  };
}

export const JWT_KEYS: KeyKind<JwtKey> = {
  name: "jwt",
  envVariable: "CJS_JWT_SIGNING_KEYS",
  fileVariable: "CJS_JWT_SIGNING_KEYS_FILE",
  parse: parser(JwtKeySet, jwtRingOf),
};

export const URL_KEYS: KeyKind<Buffer> = {
  name: "url",
  envVariable: "CJS_URL_SIGNING_KEYS",
  fileVariable: "CJS_URL_SIGNING_KEYS_FILE",
  parse: parser(UrlKeySet, urlRingOf),
};

/** The file's text; a ConfigError naming the variable when it cannot be read. */
export function readKeyFile(path: string, variable: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError([`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? "error"})`]);
  }
}

/** The keys of one kind the settings give, or null when they live in NATS KV (neither setting set). */
export function configuredKeys<K>(config: Readonly<GatewayConfig>, kind: KeyKind<K>): ConfiguredKeys<K> | null {
  const inline = config[kind.envVariable];
  const path = config[kind.fileVariable];
  if (inline !== undefined && path !== undefined)
    throw new ConfigError([`${kind.fileVariable}: set it or ${kind.envVariable}, not both`]);
  if (path !== undefined) {
    const text = readKeyFile(path, kind.fileVariable);
    return { variable: kind.fileVariable, path, text, ring: kind.parse(text, kind.fileVariable) };
  }
  if (inline !== undefined)
    return { variable: kind.envVariable, path: null, text: inline, ring: kind.parse(inline, kind.envVariable) };
  return null;
}

export interface ConfiguredKeySets {
  jwt: ConfiguredKeys<JwtKey> | null;
  url: ConfiguredKeys<Buffer> | null;
}

/** Both kinds at once, every problem listed: main checks them before connecting to NATS. */
export function configuredKeySets(config: Readonly<GatewayConfig>): ConfiguredKeySets {
  const problems: string[] = [];
  const attempt = <K>(kind: KeyKind<K>) => {
    try {
      return configuredKeys(config, kind);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return null;
    }
  };
  const keys = { jwt: attempt(JWT_KEYS), url: attempt(URL_KEYS) };
  if (problems.length > 0) throw new ConfigError(problems);
  return keys;
}
