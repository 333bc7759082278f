export { runServiceProcess } from "./service-process.js";
export type { ServiceDeps, ServiceProcessConfig, ServiceProcessOptions } from "./service-process.js";
export { startWithRetries } from "./start-with-retries.js";
export { connectWhenReachable, untilJetStreamReady } from "./wait-for-nats.js";
export { reportStartFailure } from "./start-failure.js";
export { serviceLifecycle } from "./service-lifecycle.js";
export type { ServiceLifecycle, ServiceLifecycleOptions, ServiceRun } from "./service-lifecycle.js";
