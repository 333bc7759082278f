import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

/** What `cjs login` keeps: where it signed in and the session's tokens. */
export const StoredSession = z.looseObject({
  url: z.string(),
  app_id: z.string(),
  email: z.string(),
  tokens: z.object({ access_token: z.string(), refresh_token: z.string() }),
});
export type StoredSession = z.infer<typeof StoredSession>;

/** `$CJS_CONFIG_DIR`, else `$XDG_CONFIG_HOME/cjs`, else `~/.config/cjs`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.CJS_CONFIG_DIR) return env.CJS_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "cjs");
}

export function sessionPath(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), "session.json");
}

/** The stored session; null when there is none or it cannot be read (then `cjs login` again). */
export function readSession(env: NodeJS.ProcessEnv): StoredSession | null {
  let text: string;
  try {
    text = readFileSync(sessionPath(env), "utf8");
  } catch {
    return null;
  }
  try {
    const parsed = StoredSession.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Writes the session readable by its owner only (0600, in a 0700 directory), through a
 * temporary file and a rename, so a crash never leaves half a file.
 */
export function writeSession(env: NodeJS.ProcessEnv, session: StoredSession): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = sessionPath(env);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** Removes the stored session when `still` holds for it (a newer one written meanwhile stays). */
export function removeSessionIf(env: NodeJS.ProcessEnv, still: (stored: StoredSession) => boolean): void {
  const stored = readSession(env);
  if (stored !== null && still(stored)) rmSync(sessionPath(env), { force: true });
}

export function removeSession(env: NodeJS.ProcessEnv): boolean {
  const path = sessionPath(env);
  try {
    readFileSync(path);
  } catch {
    return false;
  }
  rmSync(path, { force: true });
  return true;
}
