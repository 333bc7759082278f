export {
  findNatsServerBinary,
  NATS_SERVER_NOT_FOUND,
  NatsServerProcess,
  pinnedNatsServerPath,
  ServerExitedError,
  waitForJetStream,
} from "./server-process.js";
export type { NatsServerOptions } from "./server-process.js";
export {
  assertSupportedServer,
  binaryVersion,
  isSupportedServerVersion,
  NATS_SERVER_MINIMUM,
  NATS_SERVER_PINNED,
  parseServerVersion,
  UnsupportedServerError,
} from "./server-version.js";
