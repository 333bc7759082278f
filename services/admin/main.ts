import { connect, type NatsConnection } from "@nats-io/transport-node";
import { isAppError } from "../../shared/errors/index.js";
import { natsAuthOptions, requestRpc } from "../../shared/nats/index.js";
import { ConfigError } from "../../shared/runtime/index.js";
import { parseInvocation, resolveNatsUrl, UsageError } from "./commands.js";

/** The operator CLI (`npm run admin -- <command>`). Exit codes: 0 done, 1 failed, 2 bad input. */
async function runAdmin(argv: readonly string[], env: Record<string, string | undefined>): Promise<number> {
  let invocation;
  let url;
  try {
    invocation = parseInvocation(argv);
    if (invocation.kind === "help") {
      console.log(invocation.text);
      return 0;
    }
    url = resolveNatsUrl(invocation.natsUrl, env);
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof ConfigError)) throw error;
    console.error(error.message);
    return 2;
  }

  let nc: NatsConnection;
  try {
    // A short timeout and no reconnects: an operator wants an answer, not a wait.
    nc = await connect({
      ...natsAuthOptions(env),
      servers: url.split(",").map((server) => server.trim()),
      name: "cjs-admin",
      timeout: 3000,
      reconnect: false,
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    console.error(`cannot reach NATS at ${url}: is \`make dev\` running?`);
    return 1;
  }

  const { command, body, json } = invocation;
  try {
    const created = await requestRpc(nc, command.subject(), body, command.response);
    console.log(json ? JSON.stringify(created, null, 2) : command.describe(created));
    return 0;
  } catch (error) {
    if (!isAppError(error)) throw error;
    console.error(`error: ${error.code}: ${error.message}`);
    if (error.details !== undefined) console.error(JSON.stringify(error.details, null, 2));
    return 1;
  } finally {
    await nc.close();
  }
}

process.exitCode = await runAdmin(process.argv.slice(2), process.env);
