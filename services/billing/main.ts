import { runServiceProcess } from "../../shared/process/index.js";
import { loadConfig } from "./config.js";
import { buildBilling } from "./billing.js";

await runServiceProcess({ name: "billing", loadConfig, build: buildBilling });
