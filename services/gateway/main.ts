import { connectNats } from "../../shared/nats/index.js";
import { collectProcessMetrics, ConfigError, createLogger, installShutdown, systemClock } from "../../shared/runtime/index.js";
import { loadConfig } from "./config.js";
import { buildGateway } from "./gateway.js";

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`gateway: ${error.message}\n`);
  process.exit(2);
}
const logger = createLogger({ service: "gateway", level: config.LOG_LEVEL });
collectProcessMetrics();
const nc = await connectNats({ url: config.NATS_URL, credentials: config, name: "cjs-gateway", logger });
const gateway = await buildGateway({ nc, logger, clock: systemClock, config });
await gateway.start();
const address = await gateway.app.listen({ host: config.CJS_HOST, port: config.CJS_PORT });
logger.info({ address }, `gateway listening on ${address}`);
installShutdown(logger, async () => {
  await gateway.stop();
  await nc.drain();
});
