import { NATS_SERVER_MINIMUM, UnsupportedServerError } from "../nats-server/index.js";
import { ConfigError, type Logger } from "../runtime/index.js";

/**
 * Logs why a process could not start. A server that is too old is an operator's fix, not
 * a bug: its line names the found and the required versions, without a stack trace. So is
 * a setting found wrong only when used (a creds file that cannot be read): its line names
 * the variable. Returns the exit code: 2 for a configuration error, else 1.
 */
export function reportStartFailure(logger: Logger, name: string, error: unknown): number {
  if (error instanceof ConfigError) {
    logger.fatal({ problems: error.problems }, `${name} cannot start: ${error.problems.join("; ")}`);
    return 2;
  }
  if (error instanceof UnsupportedServerError) {
    logger.fatal(
      { nats_server_version: error.found, required: NATS_SERVER_MINIMUM },
      `${name} cannot start: ${error.message}`,
    );
    return 1;
  }
  logger.fatal({ err: error }, `${name} failed to start`);
  return 1;
}
