export {
  findNatsServerBinary,
  NATS_SERVER_NOT_FOUND,
  NatsServerProcess,
  pinnedNatsServerPath,
  ServerExitedError,
  waitForJetStream,
} from "./server-process.js";
export { serverConfig } from "./server-config.js";
export type { NatsServerOptions } from "./server-config.js";
export {
  assertSupportedServer,
  binaryVersion,
  isSupportedServerVersion,
  NATS_SERVER_MINIMUM,
  NATS_SERVER_PINNED,
  parseServerVersion,
  UnsupportedServerError,
} from "./server-version.js";
