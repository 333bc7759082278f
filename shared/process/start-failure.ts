import { NATS_SERVER_MINIMUM, UnsupportedServerError } from "../nats-server/index.js";
import type { Logger } from "../runtime/index.js";

/**
 * Logs why a process could not start. A server that is too old is an operator's fix, not
 * a bug: its line names the found and the required versions, without a stack trace.
 */
export function reportStartFailure(logger: Logger, name: string, error: unknown): void {
  if (error instanceof UnsupportedServerError) {
    logger.fatal({ nats_server_version: error.found, required: NATS_SERVER_MINIMUM }, `${name} cannot start: ${error.message}`);
    return;
  }
  logger.fatal({ err: error }, `${name} failed to start`);
}
