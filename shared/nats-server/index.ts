export { findNatsServerBinary, NATS_SERVER_NOT_FOUND, NatsServerProcess, ServerExitedError, waitForJetStream } from "./server-process.js";
export type { NatsServerOptions } from "./server-process.js";
