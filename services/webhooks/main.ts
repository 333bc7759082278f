import { runServiceProcess } from "../../shared/process/index.js";
import { loadConfig } from "./config.js";
import { buildWebhooks } from "./webhooks.js";

await runServiceProcess({ name: "webhooks", loadConfig, build: buildWebhooks });
