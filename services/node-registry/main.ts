import { runServiceProcess } from "../../shared/process/index.js";
import { loadConfig } from "./config.js";
import { buildNodeRegistry } from "./node-registry.js";

await runServiceProcess({ name: "node-registry", loadConfig, build: buildNodeRegistry });
