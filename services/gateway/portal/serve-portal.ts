import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import { sendError } from "../http/envelope.js";
import { PORTAL_CSP, serveBrowserHeaders } from "./security-headers.js";
import { wantsPage } from "./wants-page.js";

/** The portal's own pages (clients/portal/src/app.tsx): each answers index.html and the app routes in the browser. */
export const PORTAL_PAGES = [
  "/sign-in",
  "/jobs",
  "/jobs/:jobId",
  "/submit",
  "/schedules",
  "/schedules/:scheduleId",
  "/webhooks",
  "/webhooks/:webhookId",
  "/nodes",
  "/usage",
  "/billing",
  "/keys",
  "/users",
] as const;

const NOT_BUILT =
  "The web portal is not built: run `make build` (or `make setup`) to build clients/portal into its dist folder.";

/** A page with no script and no style, so it holds under the strict CSP too. */
const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Portal not built</title></head>
<body><h1>The web portal is not built</h1><p>Run <code>make build</code> (or <code>make setup</code>) in the repository, then reload this page.</p>
<p>The API is served as usual: see <a href="/docs">the API reference</a>.</p></body></html>
`;

/**
 * Serves the built portal: `/assets/...` (hashed names, cached for good) and index.html for
 * `/` and the portal's pages. A page a browser does not ask for as HTML answers like any
 * unknown path, the JSON `route.not_found`.
 */
export async function servePortal(app: FastifyInstance, portalDir: string): Promise<void> {
  const root = resolve(portalDir);
  await serveBrowserHeaders(app, PORTAL_CSP);
  await app.register(fastifyStatic, {
    root: join(root, "assets"),
    prefix: "/assets/",
    decorateReply: false,
    index: false,
    // Vite puts a content hash in every asset's name: a new build is a new URL.
    immutable: true,
    maxAge: "365d",
  });

  const sendIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    let html: string;
    try {
      // Read per request (it is small) so a rebuild is served without a restart.
      html = await readFile(join(root, "index.html"), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      if (!wantsPage(request)) return sendError(reply, new AppError("service.unavailable", NOT_BUILT));
      return reply.code(503).header("cache-control", "no-store").type("text/html; charset=utf-8").send(NOT_BUILT_PAGE);
    }
    return reply.header("cache-control", "no-cache").type("text/html; charset=utf-8").send(html);
  };

  app.get("/", sendIndex);
  for (const page of PORTAL_PAGES) {
    // Not a browser: the same answer as any unknown path.
    app.get(page, async (request, reply) => (wantsPage(request) ? sendIndex(request, reply) : reply.callNotFound()));
  }
}
