import { createRequire } from "node:module";
import { dirname } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";
import { DOCS_CSP, serveBrowserHeaders } from "./security-headers.js";

/** The files of swagger-ui-dist the page loads; its own index.html and petstore initializer are not served. */
const SWAGGER_FILES = new Set([
  "/swagger-ui.css",
  "/swagger-ui-bundle.js",
  "/swagger-ui-standalone-preset.js",
  "/favicon-32x32.png",
]);

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Compute Job Service API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-ui-standalone-preset.js"></script>
<script src="/docs/initializer.js"></script>
</body>
</html>
`;

/** Our initializer, a file rather than an inline script so the CSP needs no 'unsafe-inline' for scripts. */
const INITIALIZER = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout",
  validatorUrl: null,
  tryItOutEnabled: false,
});
`;

/** The API reference at /docs: swagger-ui from the installed package (no CDN) over /openapi.json. */
export async function serveDocs(app: FastifyInstance): Promise<void> {
  const swaggerRoot = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  await serveBrowserHeaders(app, DOCS_CSP);
  await app.register(fastifyStatic, {
    root: swaggerRoot,
    prefix: "/docs/",
    decorateReply: false,
    index: false,
    allowedPath: (path) => SWAGGER_FILES.has(path),
    maxAge: "1d",
  });
  app.get("/docs", async (_request, reply) =>
    reply.header("cache-control", "no-cache").type("text/html; charset=utf-8").send(DOCS_PAGE),
  );
  app.get("/docs/initializer.js", async (_request, reply) =>
    reply.header("cache-control", "no-cache").type("text/javascript; charset=utf-8").send(INITIALIZER),
  );
}
