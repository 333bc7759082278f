import { runServiceProcess } from "../../shared/process/index.js";
import { loadConfig } from "./config.js";
import { buildScheduler } from "./scheduler.js";

await runServiceProcess({ name: "scheduler", loadConfig, build: buildScheduler });
