import { connect, type NatsConnection } from "@nats-io/transport-node";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ComputeClient } from "../harness/client.js";
import { RPC_ROUTES, type RpcName, type RpcRoute } from "../../shared/contract/index.js";
import { expectEnvelopeWithout5xx, expectRefusal, postJson } from "../harness/edge-probe.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { bodiesOf, mutationOf, type Mutation } from "../harness/schema-arbitrary.js";
import { storeSnapshot } from "../harness/store-snapshot.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

/**
 * Bodies generated from each route's request schema, then mutated (an unknown field, a
 * wrong type, null, a wildcard id, a huge string, anywhere in the body, or no object at
 * all), sent with the credential the route takes. Whatever the body, the answer is an
 * envelope and never a 5xx; a body the schema refuses is 400 `request.invalid` and
 * changes nothing in the store. Fixed seed and run count: the same requests every time.
 */
const SEED = 1042;
const RUNS_PER_ROUTE = 25;

/**
 * Routes whose generated bodies are also sent unmutated: reads, and calls about records
 * that generated ids never name. Their answer is a success or a 4xx envelope. The others
 * (creating keys, jobs and nodes; cancelling, draining, rotating; a long poll) get
 * mutated bodies only, so the test's own fixtures stay as they are.
 */
const SENT_UNMUTATED: ReadonlySet<RpcName> = new Set<RpcName>([
  "login",
  "verifyOtp",
  "refresh",
  "logout",
  "listApiKeys",
  "retrieveJob",
  "listJobs",
  "presignUpload",
  "presignDownload",
  "logStreamUrl",
  "heartbeat",
  "result",
  "pushLogs",
  "listNodes",
  "listPlans",
  "getSubscription",
  "listLedger",
]);

/** A generated long poll would wait up to 30 s for nothing: generated polls do not wait. */
const PINS = { wait_seconds: fc.constant(0) };

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;
let callers: Record<RpcRoute["auth"], ComputeClient>;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    { CJS_RATE_LIMIT_PER_MINUTE: "1000000", CJS_RATE_LIMIT_PER_HOUR: "100000000" },
  );
  const baseUrl = system.gateways[0]!.baseUrl;
  const tenant = await createTenant(system.gateways[0]!.nc);
  const { client: user, anonymous } = await signedInClient(baseUrl, tenant);
  const node = await user.call("registerNode", {
    name: "fuzzed",
    hostname: "fuzz.local",
    pool_id: "fuzz-pool",
    capacity: { cpu: 1, memory_mb: 512 },
    agent_version: "test",
  });
  await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "fuzz-no-nodes" });
  const nodeClient = new ComputeClient({ baseUrl, appId: tenant.app.app_id, apiKey: node.api_key });
  callers = { public: anonymous, jwt: user, user, user_or_node: user, node: nodeClient };
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

/** The top-level fields a route's schema names (a mutation may set one the body left out). */
function fieldsOf(route: RpcRoute): string[] {
  const schema = z.toJSONSchema(route.request, { io: "input" }) as { properties?: Record<string, unknown> };
  return Object.keys(schema.properties ?? {});
}

const UNMUTATED: Mutation = { kind: "none", apply: (body) => body };

/**
 * A `__proto__` key, or a `constructor` holding `prototype`, anywhere in the body: the JSON
 * parser refuses such a body before any schema sees it (`request.malformed_json`).
 */
function poisoned(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(poisoned);
  if (value === null || typeof value !== "object") return false;
  return Object.entries(value).some(
    ([key, item]) =>
      key === "__proto__" ||
      (key === "constructor" && item !== null && typeof item === "object" && Object.hasOwn(item, "prototype")) ||
      poisoned(item),
  );
}

describe("every route's answer to bodies made from its schema and mutated", () => {
  for (const [name, route] of Object.entries(RPC_ROUTES) as Array<[RpcName, RpcRoute]>) {
    it(`${name}: an envelope and never a 5xx; a body its schema refuses is 400 request.invalid and changes nothing`, async () => {
      const mutations = SENT_UNMUTATED.has(name)
        ? fc.oneof(
            { arbitrary: mutationOf(fieldsOf(route)), weight: 3 },
            { arbitrary: fc.constant(UNMUTATED), weight: 1 },
          )
        : mutationOf(fieldsOf(route));
      let before = await storeSnapshot(nc);
      await fc.assert(
        fc.asyncProperty(bodiesOf(route.request, PINS), mutations, async (generated, mutation) => {
          const body = mutation.apply(generated);
          const response = await postJson(callers[route.auth], route.path, body);
          const context = `${name} (${mutation.kind}) ${JSON.stringify(body)?.slice(0, 200)}`;
          const after = await storeSnapshot(nc);
          if (route.request.safeParse(body).success) {
            expectEnvelopeWithout5xx(response, context);
          } else {
            expect(expectRefusal(response, context).code, context).toBe(
              poisoned(body) ? "request.malformed_json" : "request.invalid",
            );
            expect(after, context).toEqual(before);
          }
          before = after;
        }),
        { seed: SEED, numRuns: RUNS_PER_ROUTE, endOnFailure: true },
      );
    });
  }
});
