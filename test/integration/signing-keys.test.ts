import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { RotateKeysResponse, type Artifact } from "../../shared/contract/index.js";
import { BUCKETS, ensureBuckets, requestRpc } from "../../shared/nats/index.js";
import { generateJwtKey } from "../../services/gateway/secrets/jwt-keys.js";
import { signingKeyReloadFailures } from "../../services/gateway/secrets/signing-key-metrics.js";
import { errorCodeOf } from "../harness/error-code.js";
import { LogCapture, type LogLine } from "../harness/log-capture.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startSystem,
  type RunningGateway,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

/**
 * Signing keys and their rotation, on two gateway replicas sharing NATS KV and on a third
 * whose keys come from files. The store starts as the version before key ids wrote it, so
 * the upgrade path is the one tested.
 */
const logs = new LogCapture();
/** Every secret the test made or read: none may appear in a log line. */
const secrets: string[] = [];

let nats: NatsHarness;
let nc: NatsConnection;
let system: RunningSystem;
let gatewayA: RunningGateway;
let gatewayB: RunningGateway;
let tenant: Tenant;
let legacyKid: string;
/** A token signed before any rotation, by the key the previous version made. */
let legacyToken: string;
let kvReplicasStopped = false;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  // The records as the previous version made them: no `retired`, a URL secret without an id.
  const kv = (await ensureBuckets(nc, [BUCKETS.signingKeys], { replicas: 1, logger: pino({ level: "silent" }) }))[
    BUCKETS.signingKeys
  ];
  const jwt = generateJwtKey();
  legacyKid = jwt.kid;
  const urlSecret = randomBytes(32).toString("base64url");
  const created_at = new Date().toISOString();
  await kv.put(
    "current",
    JSON.stringify({ kid: jwt.kid, alg: "EdDSA", private_jwk: jwt.privateJwk, public_jwk: jwt.publicJwk, created_at }),
  );
  await kv.put("url-hmac", JSON.stringify({ secret: urlSecret, created_at }));
  secrets.push(String(jwt.privateJwk.d), urlSecret);

  system = await startSystem(nats.url, { gateways: 0, schedulers: 1, registries: 1 });
  gatewayA = await startGateway(nats.url, {}, { logger: logs.logger("gateway-a", "trace") });
  gatewayB = await startGateway(nats.url, {}, { logger: logs.logger("gateway-b", "trace") });
  tenant = await createTenant(gatewayA.nc);
});

afterAll(async () => {
  if (!kvReplicasStopped) await Promise.all([gatewayA?.stop(), gatewayB?.stop()]);
  await system?.stop();
  await nc?.close();
  await nats?.stop();
});

function kidOf(token: string): unknown {
  return (JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { kid?: unknown }).kid;
}

function clientWith(gateway: RunningGateway, accessToken: string): ComputeClient {
  return new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id }).with({ accessToken });
}

async function signIn(gateway: RunningGateway): Promise<string> {
  return (await signedInClient(gateway.baseUrl, tenant)).tokens.access_token;
}

/** Rotates through the operator command, and waits until every replica in `replicas` logged the new key. */
async function rotate(kind: "jwt" | "url", replicas: string[], keepSeconds?: number): Promise<RotateKeysResponse> {
  const from = logs.mark();
  const rotation = await requestRpc(nc, "adminKeysRotate", {
    kind,
    ...(keepSeconds === undefined ? {} : { keep_seconds: keepSeconds }),
  });
  await Promise.all(replicas.map((service) => logs.waitFor(reloaded(service, kind, rotation.kid), from)));
  return rotation;
}

function reloaded(service: string, kind: "jwt" | "url", kid: string, retired?: string[]) {
  return (line: LogLine) =>
    line.service === service &&
    line.msg === "signing keys reloaded" &&
    line.kind === kind &&
    line.signing_kid === kid &&
    (retired === undefined || JSON.stringify(line.retired_kids) === JSON.stringify(retired));
}

/** Keeps the secrets of the current KV records, so the log check looks for them too. */
async function rememberKvSecrets(): Promise<void> {
  const kv = (await ensureBuckets(nc, [BUCKETS.signingKeys], { replicas: 1, logger: pino({ level: "silent" }) }))[
    BUCKETS.signingKeys
  ];
  const jwt = (await kv.get("current"))!.json<{ private_jwk: { d: string } }>();
  const url = (await kv.get("url-hmac"))!.json<{ secret: string }>();
  secrets.push(jwt.private_jwk.d, url.secret);
}

/** Uploads an artifact through `gateway` and answers a signed download URL for it. */
async function artifactUrl(gateway: RunningGateway, accessToken: string, artifactId: string): Promise<string> {
  const user = clientWith(gateway, accessToken);
  const { job_id } = await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "no-nodes" });
  const upload = await user.call("presignUpload", { job_id, artifact_id: artifactId });
  const put = await fetch(upload.url, { method: "PUT", body: `bytes of ${artifactId}` });
  expect(put.status, JSON.stringify((await put.json()) as { payload: Artifact })).toBe(200);
  return (await user.call("presignDownload", { job_id, artifact_id: artifactId })).url;
}

/** What `url` answers when asked of `gateway`: the status, and the body or the error code. */
async function download(gateway: RunningGateway, url: string): Promise<{ status: number; body: string }> {
  const parsed = new URL(url);
  const response = await fetch(`${gateway.baseUrl}${parsed.pathname}${parsed.search}`);
  const text = await response.text();
  return {
    status: response.status,
    body: response.status === 200 ? text : String((JSON.parse(text) as { code?: unknown }).code),
  };
}

describe("signing keys in NATS KV", () => {
  it("a token made before a rotation works on both replicas after it, and new tokens name the new key", async () => {
    const before = await signIn(gatewayA);
    expect(kidOf(before)).toBe(legacyKid);
    legacyToken = before;

    const rotation = await rotate("jwt", ["gateway-a", "gateway-b"]);
    expect(rotation.kid).not.toBe(legacyKid);
    expect(rotation.retired.map(({ kid }) => kid)).toEqual([legacyKid]);
    // The old token's key is kept at least the access-token lifetime (900 s by default).
    expect(Date.parse(rotation.retired[0]!.not_after)).toBeGreaterThan(Date.now() + 900_000);
    await rememberKvSecrets();

    for (const gateway of [gatewayA, gatewayB]) {
      await expect(clientWith(gateway, before).call("listApiKeys", {})).resolves.toBeDefined();
    }
    const after = await signIn(gatewayB);
    expect(kidOf(after)).toBe(rotation.kid);
    await expect(clientWith(gatewayA, after).call("listApiKeys", {})).resolves.toBeDefined();
    const jwks = (await (await fetch(`${gatewayB.baseUrl}/.well-known/jwks.json`)).json()) as {
      keys: Array<{ kid: string; d?: string }>;
    };
    expect(jwks.keys.map(({ kid }) => kid)).toEqual([rotation.kid, legacyKid]);
    expect(jwks.keys.every((key) => key.d === undefined)).toBe(true);
  });

  it("keeps the signing key where the previous version reads it, beside the fields it does not know", async () => {
    const kv = (await ensureBuckets(nc, [BUCKETS.signingKeys], { replicas: 1, logger: pino({ level: "silent" }) }))[
      BUCKETS.signingKeys
    ];
    await kv.put("current", JSON.stringify({ ...(await kv.get("current"))!.json<object>(), from_a_newer_version: 1 }));
    const rotation = await rotate("jwt", ["gateway-a", "gateway-b"]);
    await rememberKvSecrets();
    const record = (await kv.get("current"))!.json<Record<string, unknown>>();
    expect(record).toMatchObject({ kid: rotation.kid, alg: "EdDSA", from_a_newer_version: 1 });
    expect(record.private_jwk).toMatchObject({ kid: rotation.kid, kty: "OKP", crv: "Ed25519" });
  });

  it("a retired key past its end is refused on every replica, and one still within its end is not", async () => {
    const early = await signIn(gatewayA);
    const earlyKid = kidOf(early);
    await rotate("jwt", ["gateway-a", "gateway-b"], 0);
    await rememberKvSecrets();
    for (const gateway of [gatewayA, gatewayB]) {
      expect(await errorCodeOf(clientWith(gateway, early).call("listApiKeys", {}))).toBe("auth.invalid_credentials");
      // The first key was retired earlier with the full lifetime: its tokens still verify.
      await expect(clientWith(gateway, legacyToken).call("listApiKeys", {})).resolves.toBeDefined();
    }
    const jwks = (await (await fetch(`${gatewayA.baseUrl}/.well-known/jwks.json`)).json()) as {
      keys: Array<{ kid: string }>;
    };
    expect(jwks.keys.map(({ kid }) => kid)).not.toContain(earlyKid);
    expect(jwks.keys.map(({ kid }) => kid)).toContain(legacyKid);
  });

  it("a token naming a key no one has is the usual 401", async () => {
    const token = await signIn(gatewayA);
    const [, payload, signature] = token.split(".");
    const header = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: "no-such-key", typ: "JWT" })).toString("base64url");
    expect(await errorCodeOf(clientWith(gatewayB, `${header}.${payload}.${signature}`).call("listApiKeys", {}))).toBe(
      "auth.invalid_credentials",
    );
  });

  it("a signed artifact URL made before a rotation still downloads from both replicas; one whose key ended does not", async () => {
    const token = await signIn(gatewayA);
    const before = await artifactUrl(gatewayA, token, "before.txt");
    // The URL secret the previous version made has no id, nor do its URLs.
    expect(new URL(before).searchParams.has("kid")).toBe(false);

    const rotation = await rotate("url", ["gateway-a", "gateway-b"]);
    await rememberKvSecrets();
    for (const gateway of [gatewayA, gatewayB])
      expect(await download(gateway, before)).toEqual({ status: 200, body: "bytes of before.txt" });

    const after = await artifactUrl(gatewayB, token, "after.txt");
    expect(new URL(after).searchParams.get("kid")).toBe(rotation.kid);
    await rotate("url", ["gateway-a", "gateway-b"], 0);
    await rememberKvSecrets();
    for (const gateway of [gatewayA, gatewayB]) {
      expect(await download(gateway, after)).toEqual({ status: 403, body: "url.signature_invalid" });
      expect(await download(gateway, before)).toEqual({ status: 200, body: "bytes of before.txt" });
    }
  });
});

describe("signing keys from files", () => {
  let dir: string;
  let fileGateway: RunningGateway;
  const jwtFile = () => join(dir, "jwt-keys.json");
  const urlFile = () => join(dir, "url-keys.json");

  const jwk = (kid: string) => {
    const key = { ...generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }), kid };
    secrets.push(String(key.d));
    return key;
  };
  const urlKey = (kid: string) => {
    const key = { kid, secret: randomBytes(32).toString("base64url") };
    secrets.push(key.secret);
    return key;
  };
  /** Replaces the file whole, as Kubernetes swaps a mounted secret. */
  const replaceFile = async (path: string, content: unknown) => {
    await writeFile(`${path}.next`, typeof content === "string" ? content : JSON.stringify(content));
    await rename(`${path}.next`, path);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cjs-signing-keys-"));
  });

  afterAll(async () => {
    await fileGateway?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("rewriting the files switches the signer without a restart, and what the removed key signed is refused", async () => {
    const [f1, f2, u1, u2] = [jwk("f1"), jwk("f2"), urlKey("u1"), urlKey("u2")];
    await replaceFile(jwtFile(), { keys: [f1] });
    await replaceFile(urlFile(), { keys: [u1] });
    fileGateway = await startGateway(
      nats.url,
      { CJS_JWT_SIGNING_KEYS_FILE: jwtFile(), CJS_URL_SIGNING_KEYS_FILE: urlFile(), CJS_SIGNING_KEYS_RELOAD_MS: "100" },
      { logger: logs.logger("gateway-f", "trace") },
    );
    const early = await signIn(fileGateway);
    expect(kidOf(early)).toBe("f1");
    const earlyUrl = await artifactUrl(fileGateway, early, "early.txt");
    expect(new URL(earlyUrl).searchParams.get("kid")).toBe("u1");

    let from = logs.mark();
    await replaceFile(jwtFile(), { keys: [f1, { ...f2, current: true }] });
    await replaceFile(urlFile(), { keys: [{ ...u2, current: true }, u1] });
    await Promise.all([
      logs.waitFor(reloaded("gateway-f", "jwt", "f2", ["f1"]), from),
      logs.waitFor(reloaded("gateway-f", "url", "u2", ["u1"]), from),
    ]);
    const late = await signIn(fileGateway);
    expect(kidOf(late)).toBe("f2");
    await expect(clientWith(fileGateway, early).call("listApiKeys", {})).resolves.toBeDefined();
    expect(await download(fileGateway, earlyUrl)).toEqual({ status: 200, body: "bytes of early.txt" });

    from = logs.mark();
    await replaceFile(jwtFile(), { keys: [f2] });
    await replaceFile(urlFile(), { keys: [u2] });
    await Promise.all([
      logs.waitFor(reloaded("gateway-f", "jwt", "f2", []), from),
      logs.waitFor(reloaded("gateway-f", "url", "u2", []), from),
    ]);
    expect(await errorCodeOf(clientWith(fileGateway, early).call("listApiKeys", {}))).toBe("auth.invalid_credentials");
    expect(await download(fileGateway, earlyUrl)).toEqual({ status: 403, body: "url.signature_invalid" });
    await expect(clientWith(fileGateway, late).call("listApiKeys", {})).resolves.toBeDefined();
  });

  it("a file that turns bad keeps the keys in use and logs why, without its content", async () => {
    const failures = async () =>
      (await signingKeyReloadFailures.get()).values.find(({ labels }) => labels.kind === "jwt")?.value ?? 0;
    const failuresBefore = await failures();
    const from = logs.mark();
    const leaked = jwk("bad");
    await replaceFile(jwtFile(), `{"keys":[${JSON.stringify(leaked)}`);
    const line = await logs.waitFor(
      (each) => each.service === "gateway-f" && each.msg === "signing keys not reloaded; the previous keys stay in use",
      from,
    );
    expect(line.problems).toEqual(["CJS_JWT_SIGNING_KEYS_FILE: is not valid JSON"]);
    expect(await failures()).toBe(failuresBefore + 1);
    expect(kidOf(await signIn(fileGateway))).toBe("f2");
  });

  it("the operator command refuses to rotate keys that a setting gives", async () => {
    // Only the file-configured replica answers, so the refusal is its own.
    kvReplicasStopped = true;
    await Promise.all([gatewayA.stop(), gatewayB.stop()]);
    const code = await errorCodeOf(requestRpc(nc, "adminKeysRotate", { kind: "jwt" }));
    expect(code).toBe("state.conflict");
  });
});

describe("secrets in logs", () => {
  it("no signing key or URL secret appears in any gateway log line", () => {
    expect(logs.raw.length).toBeGreaterThan(0);
    expect(secrets.length).toBeGreaterThan(8);
    for (const secret of secrets) {
      expect(logs.raw.filter((line) => line.includes(secret))).toEqual([]);
    }
  });
});
