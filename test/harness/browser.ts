import { access, constants } from "node:fs/promises";
import { chromium, type Browser } from "playwright-core";

/** Where Debian's package puts it; `make setup` installs it (deploy/scripts/ensure-chromium.sh). */
const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** The Chromium the browser tests drive: `CJS_CHROMIUM_BIN`, else Debian's. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CJS_CHROMIUM_BIN ?? DEFAULT_CHROMIUM;
}

/** Starts a headless Chromium; a missing binary is a clear error naming the fix. */
export async function launchChromium(env: NodeJS.ProcessEnv = process.env): Promise<Browser> {
  const executablePath = chromiumPath(env);
  try {
    await access(executablePath, constants.X_OK);
  } catch {
    throw new Error(
      `No Chromium at ${executablePath}: run \`make setup\` (it installs Debian's chromium package), or set CJS_CHROMIUM_BIN to a Chromium binary.`,
    );
  }
  // No sandbox and no /dev/shm: containers and CI runners have neither to spare.
  return chromium.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
}
