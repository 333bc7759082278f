/**
 * The floor for (f): a bare fastify route that does one JetStream publish per request and
 * nothing else (no authentication, no validation, no logging, no job record), in a process
 * of its own. What our gateway's submit costs beyond this is what our submit path adds.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import fastify from "fastify";
import { z } from "zod";
import { parseConfig } from "../../../shared/runtime/index.js";

const BareEnv = z.object({
  NATS_URL: z.string().min(1),
  BENCH_PORT: z.coerce.number().int().min(1).max(65535),
});

/** One stream of its own, stored in files as our job records are. */
const BARE_STREAM = "BENCH_BARE_SUBMIT";
const SUBJECT = "bench.bare.submit";

const env = parseConfig(BareEnv, process.env);
const nc = await connect({ servers: env.NATS_URL, name: "bench bare submit" });
await (await jetstreamManager(nc)).streams.add({ name: BARE_STREAM, subjects: [SUBJECT] });
const js = jetstream(nc);

const app = fastify({ logger: false });
app.post("/submit", async (request) => {
  const ack = await js.publish(SUBJECT, JSON.stringify(request.body));
  return { status: "SUCCESS", message: "Job submitted.", payload: { job_id: String(ack.seq) } };
});
await app.listen({ host: "127.0.0.1", port: env.BENCH_PORT });
process.send?.({ type: "ready" });

const stop = async (): Promise<void> => {
  await app.close();
  await nc.drain();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("disconnect", () => void stop());
