import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { launchChromium } from "../harness/browser.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { startGateway, type RunningGateway } from "../harness/system.js";

/**
 * How the gateway serves browsers: the portal's pages and files with their security
 * headers, the API's unknown paths still JSON, /docs rendering swagger-ui under its CSP,
 * and a clear answer when the portal was never built.
 */
let nats: NatsHarness;
let gateway: RunningGateway;
let unbuilt: RunningGateway;
let browser: Browser;

beforeAll(async () => {
  nats = await startNats();
  [gateway, unbuilt] = await Promise.all([
    startGateway(nats.url),
    startGateway(nats.url, { CJS_PORTAL_DIR: "/nonexistent/portal-dist" }),
  ]);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([gateway?.stop(), unbuilt?.stop()]);
  await nats?.stop();
});

const HTML = { accept: "text/html,application/xhtml+xml" };

function get(base: RunningGateway, path: string, headers: Record<string, string> = HTML): Promise<Response> {
  return fetch(`${base.baseUrl}${path}`, { headers });
}

function expectBrowserHeaders(response: Response): void {
  expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  expect(response.headers.get("referrer-policy")).toBe("no-referrer");
  expect(response.headers.get("x-frame-options")).toBe("DENY");
}

describe("the portal as the gateway serves it", () => {
  it("answers / and the portal's pages with index.html under a strict CSP", async () => {
    for (const path of [
      "/",
      "/jobs",
      "/jobs?state=failed&schedule=sch_0000000000000000000000",
      "/jobs/job_0000000000000000000000",
      "/schedules",
      "/schedules/sch_0000000000000000000000",
      "/webhooks",
      "/webhooks/whk_0000000000000000000000",
      "/usage",
      "/users",
      "/keys",
      "/billing?checkout=done",
    ]) {
      const response = await get(gateway, path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await response.text()).toContain('<div id="app">');
      expectBrowserHeaders(response);
      const csp = response.headers.get("content-security-policy")!;
      for (const directive of [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
      ])
        expect(csp).toContain(directive);
      expect(csp).not.toContain("unsafe-inline");
    }
  });

  it("serves the built assets with their headers and a long cache", async () => {
    const html = await (await get(gateway, "/")).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const response = await get(gateway, script!, {});
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/javascript/);
    expect(response.headers.get("cache-control")).toContain("immutable");
    expectBrowserHeaders(response);
  });

  it("keeps the JSON route.not_found for API paths and for a portal page asked for as JSON", async () => {
    for (const [path, headers] of [
      ["/api/compute/nothing-here", HTML],
      ["/openapi.json/x", HTML],
      ["/jobs", { accept: "application/json" }],
      ["/assets/missing.js", {}],
    ] as const) {
      const response = await get(gateway, path, headers);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ status: "ERROR", code: "route.not_found" });
    }
    const health = await get(gateway, "/healthz");
    expect(await health.json()).toEqual({ status: "ok" });
    // The pages' security headers stay on the pages: the API's answers carry none.
    expect(health.headers.get("content-security-policy")).toBeNull();
    expect(health.headers.get("x-frame-options")).toBeNull();
  });

  it("says to run make build when the portal was not built, as a page or as the envelope", async () => {
    const page = await get(unbuilt, "/");
    expect(page.status).toBe(503);
    expect(await page.text()).toContain("make build");
    expectBrowserHeaders(page);
    const envelope = await get(unbuilt, "/", { accept: "application/json" });
    expect(envelope.status).toBe(503);
    expect(await envelope.json()).toMatchObject({
      status: "ERROR",
      code: "service.unavailable",
      message: expect.stringContaining("make build"),
    });
  });

  it("serves the API reference at /docs, rendered by swagger-ui from /openapi.json with no CSP violation", async () => {
    const response = await get(gateway, "/docs");
    expectBrowserHeaders(response);
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(await (await get(gateway, "/docs/index.html", {})).json()).toMatchObject({ code: "route.not_found" });

    const page = await browser.newPage();
    // A bound against a hang, not a speed: swagger-ui's 1.7 MB bundle parsed and the whole contract rendered took
    // more than 15 s once in CI, with four test files and Chromium sharing two cores (3.6 s on a quiet machine).
    page.setDefaultTimeout(60_000);
    const violations: string[] = [];
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() !== "error") return;
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      else problems.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("requestfailed", (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
    try {
      await page.goto(`${gateway.baseUrl}/docs`);
      const title = (await (await get(gateway, "/openapi.json", {})).json()) as { info: { title: string } };
      await page.locator(".swagger-ui .info .title", { hasText: title.info.title }).waitFor();
      await page.locator(".opblock-summary-path", { hasText: "/api/compute/jobs/submit" }).first().waitFor();
    } catch (error) {
      // Says why the page never rendered (a refused script, a failed fetch of /openapi.json) rather than only that.
      throw new Error(`${(error as Error).message}\nwhat the page reported: ${JSON.stringify(problems)}`, {
        cause: error,
      });
    }
    expect(violations).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 150_000);
});
