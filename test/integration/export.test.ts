import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { EXPORT_ROUTES } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * Exports through the whole stack (gateway, scheduler, billing). The tenant has more jobs
 * than one list page holds (200), so an export spans pages. Jobs stay queued: there are no nodes.
 */
const JOB_COUNT = 205;

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let admin: ComputeClient;
let adminExporter: Exporter;
/** Job ids, newest first (the order of jobs/list and of the export). */
let jobIds: string[];

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  tenant = await createTenant(system.gateways[0]!.nc);
  admin = (await signedInClient(system.gateways[0]!.baseUrl, tenant)).client;
  adminExporter = await exporterOf(tenant);
  const submitted: string[] = [];
  for (let index = 0; index < JOB_COUNT; index += 1) {
    // A name to quote, and one a spreadsheet would run, on the first two jobs.
    const name =
      index === 0 ? 'build, "nightly"\nsecond line' : index === 1 ? '=HYPERLINK("http://evil")' : `job ${index}`;
    const labels = index % 2 === 0 ? { parity: "even" } : { parity: "odd" };
    submitted.push(
      (await admin.call("submitJob", { type: "shell", command: ["true"], pool_id: "export-pool", name, labels }))
        .job_id,
    );
  }
  jobIds = await listAll({});
  expect(new Set(jobIds)).toEqual(new Set(submitted));
  for (const amount of [100, 40, 75])
    await requestRpc(system.gateways[0]!.nc, "adminCreditSet", { business_id: tenant.business.business_id, amount });
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

/** Every job id jobs/list gives for `filters`, page by page. */
async function listAll(filters: Record<string, unknown>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await admin.call("listJobs", { ...filters, limit: 200, ...(cursor ? { cursor } : {}) });
    ids.push(...page.items.map((job) => job.job_id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

/** Who exports: an app id and a bearer token. */
interface Exporter {
  appId: string;
  token: string;
}

async function exportOf(who: Exporter, path: string, body: unknown) {
  const response = await fetch(`${system.gateways[0]!.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-app-id": who.appId, authorization: `Bearer ${who.token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function exporterOf(of: Tenant): Promise<Exporter> {
  const { tokens } = await signedInClient(system.gateways[0]!.baseUrl, of);
  return { appId: of.app.app_id, token: tokens.access_token };
}

/** Parses RFC 4180 text (quoted cells may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (quoted && char === '"' && text[index + 1] === '"') {
      cell += '"';
      index += 1;
    } else if (char === '"') {
      quoted = !quoted;
    } else if (!quoted && char === ",") {
      row.push(cell);
      cell = "";
    } else if (!quoted && char === "\r" && text[index + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      index += 1;
    } else {
      cell += char;
    }
  }
  return rows;
}

/** Another user of the tenant's business, with `role`. */
async function exporterWithRole(role: "admin" | "member"): Promise<Exporter> {
  const password = `pw-${randomBase62(20)}`;
  const user = await requestRpc(system.gateways[0]!.nc, "adminUserCreate", {
    app_id: tenant.app.app_id,
    business_id: tenant.business.business_id,
    email: `export-${randomBase62(8).toLowerCase()}@example.test`,
    password,
    role,
  });
  return exporterOf({ ...tenant, user, password });
}

const JOBS = EXPORT_ROUTES.exportJobs.path;
const LEDGER = EXPORT_ROUTES.exportLedger.path;

describe("jobs/export", () => {
  it("streams every job across pages as CSV, in jobs/list order, as an attachment, with cells quoted and formulas defused", async () => {
    const answer = await exportOf(adminExporter, JOBS, { format: "csv" });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(answer.headers.get("content-disposition")).toMatch(
      new RegExp(`^attachment; filename="jobs-${tenant.business.business_id}-\\d{8}T\\d{6}Z\\.csv"$`),
    );
    const [header, ...rows] = parseCsv(answer.text);
    expect(header?.slice(0, 4)).toEqual(["job_id", "name", "type", "state"]);
    expect(rows.map((row) => row[0])).toEqual(jobIds);
    const nameOf = (jobId: string) => rows.find((row) => row[0] === jobId)?.[1];
    expect(nameOf(jobIds.at(-1)!)).toBe('build, "nightly"\nsecond line');
    expect(nameOf(jobIds.at(-2)!)).toBe('\'=HYPERLINK("http://evil")');
    expect(rows.every((row) => row.length === header!.length && row[3] === "queued")).toBe(true);
  });

  it("streams NDJSON with jobs/list's filters", async () => {
    const answer = await exportOf(adminExporter, JOBS, { format: "ndjson", label: "parity=even" });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const jobs = answer.text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { job_id: string; labels: Record<string, string>; env?: unknown });
    expect(jobs.map((job) => job.job_id)).toEqual(await listAll({ label: "parity=even" }));
    expect(jobs.length).toBe(Math.ceil(JOB_COUNT / 2));
    expect(jobs.every((job) => job.labels.parity === "even" && job.env === undefined)).toBe(true);
  });

  it("refuses before the first byte with the envelope: a member 403, a bad body 400, no credential 401", async () => {
    const member = await exporterWithRole("member");
    for (const [who, body, status, code] of [
      [member, { format: "csv" }, 403, "permission.denied"],
      [adminExporter, { format: "xlsx" }, 400, "request.invalid"],
      [adminExporter, { format: "csv", limit: 5 }, 400, "request.invalid"],
    ] as const) {
      const answer = await exportOf(who, JOBS, body);
      expect(answer.status).toBe(status);
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text)).toMatchObject({ status: "ERROR", code });
    }
    const anonymous = await fetch(`${system.gateways[0]!.baseUrl}${JOBS}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-app-id": tenant.app.app_id },
      body: "{}",
    });
    expect(anonymous.status).toBe(401);
    const wrongMethod = await fetch(`${system.gateways[0]!.baseUrl}${JOBS}`, {
      headers: { "x-app-id": tenant.app.app_id },
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
  });

  it("an API key needs the export's scope: jobs:read for jobs, billing:read for the ledger", async () => {
    const { key } = await admin.call("createApiKey", { name: "ledger reader", scopes: ["billing:read"] });
    const send = (path: string) =>
      fetch(`${system.gateways[0]!.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-app-id": tenant.app.app_id, "x-api-key": key },
        body: JSON.stringify({ format: "ndjson" }),
      });

    const jobs = await send(JOBS);
    expect(jobs.status).toBe(403);
    expect(await jobs.json()).toMatchObject({ code: "auth.scope_missing", details: { scope: "jobs:read" } });
    const ledger = await send("/api/compute/billing/ledger/export");
    expect(ledger.status).toBe(200);
    await ledger.text();
  });

  it("another business of the same app, or another app, exports only its own records: none of the first one's", async () => {
    for (const other of [
      await createTenant(system.gateways[0]!.nc, { appId: tenant.app.app_id }),
      await createTenant(system.gateways[0]!.nc),
    ]) {
      const exporter = await exporterOf(other);
      const jobs = await exportOf(exporter, JOBS, { format: "csv" });
      expect(parseCsv(jobs.text).length).toBe(1);
      const ledger = await exportOf(exporter, LEDGER, { format: "ndjson" });
      expect(ledger.status).toBe(200);
      expect(ledger.text).not.toContain(tenant.business.business_id);
      expect(ledger.text.split("\n").filter((line) => line.includes('"set"'))).toEqual([]);
    }
  });
});

describe("billing/ledger/export", () => {
  it("streams the business's ledger entries, newest first, as in billing/ledger/list", async () => {
    const listed = await admin.call("listLedger", { limit: 200 });
    const csv = await exportOf(adminExporter, LEDGER, { format: "csv" });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="ledger-/);
    const [header, ...rows] = parseCsv(csv.text);
    expect(header?.slice(0, 4)).toEqual(["entry_id", "kind", "amount", "balance_after"]);
    expect(rows.map((row) => row[0])).toEqual(listed.items.map((entry) => entry.entry_id));
    expect(rows.filter((row) => row[1] === "set").map((row) => Number(row[3]))).toEqual([75, 40, 100]);
    // A negative amount stays a number: the formula guard is for text only.
    expect(rows.some((row) => row[2]?.startsWith("-") === true)).toBe(true);

    const ndjson = await exportOf(adminExporter, LEDGER, { format: "ndjson" });
    expect(
      ndjson.text
        .trimEnd()
        .split("\n")
        .map((line) => (JSON.parse(line) as { entry_id: string }).entry_id),
    ).toEqual(listed.items.map((entry) => entry.entry_id));
  });
});

describe("an owning service that is away", () => {
  it("answers 503 with the envelope before the first byte", async () => {
    await Promise.all(system.schedulers.map((scheduler) => scheduler.stop()));
    const answer = await exportOf(adminExporter, JOBS, { format: "ndjson" });
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.text)).toMatchObject({ status: "ERROR", code: "service.unavailable" });
  });
});
