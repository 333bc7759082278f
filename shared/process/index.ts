export { runServiceProcess } from "./service-process.js";
export type { ServiceDeps, ServiceProcessConfig, ServiceProcessOptions } from "./service-process.js";
