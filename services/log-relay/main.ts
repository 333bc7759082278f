import { runServiceProcess } from "../../shared/process/index.js";
import { loadConfig } from "./config.js";
import { buildLogRelay } from "./log-relay.js";

await runServiceProcess({ name: "log-relay", loadConfig, build: buildLogRelay });
