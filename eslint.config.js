import { dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import js from "@eslint/js";
import { defineConfig, includeIgnoreFile } from "eslint/config";
import tseslint from "typescript-eslint";

const root = dirname(fileURLToPath(import.meta.url));

/**
 * The import boundaries of docs/architecture.md ("Repository layout"), checked on the resolved target rather than on
 * the specifier text: a service may own a sub-folder named like another service
 * (`services/gateway/admin/`), which specifier patterns cannot tell apart.
 *
 * - `services/<x>/` never imports `services/<y>/`; services talk over NATS. The embedded
 *   launcher `services/dev/` is the exception: it hosts every service in one process.
 * - `clients/` (programs that talk to the service over its API, like the agent) never
 *   import `services/`, nor one another, except the SDK through its entry
 *   (`clients/sdk/src/index.js`): the CLI and the portal are built on it. Services never
 *   import `clients/`, except `services/dev/`, which runs the agent in-process.
 * - `shared/` never imports `services/` or `clients/`.
 * - Outside `shared/<area>/`, only `shared/<area>/index.js` may be imported.
 */
/** The SDK's public entry, which the other clients may import. */
function isSdkEntry(to) {
  return to.length === 4 && to[1] === "sdk" && to[2] === "src" && /^index(\.[jt]s)?$/.test(to[3] ?? "");
}

const importBoundaries = {
  meta: {
    type: "problem",
    docs: { description: "Keep the one-way dependencies between services/ and shared/ areas" },
    schema: [],
    messages: {
      crossService:
        "services/{{from}} must not import services/{{to}}: services talk over NATS (only services/dev hosts them all).",
      sharedToService: "shared/ must not import services/{{to}}: libraries never depend on processes.",
      deepShared:
        "Import shared/{{area}}/index.js, not shared/{{area}}/{{file}}: each area exports its public names from its index.",
      clientToService: "clients/{{from}} must not import services/{{to}}: clients talk to the service over its API.",
      crossClient:
        "clients/{{from}} must not import clients/{{to}}: each client stands alone (the SDK only through clients/sdk/src/index.js).",
      serviceToClient:
        "services/{{from}} must not import clients/{{to}}: only services/dev runs a client (the agent) in-process.",
      sharedToClient: "shared/ must not import clients/{{to}}: libraries never depend on programs.",
    },
  },
  create(context) {
    const from = relative(root, context.filename).split(sep);

    function check(node) {
      const specifier = node?.value;
      if (typeof specifier !== "string" || !specifier.startsWith(".")) return;
      const to = relative(root, resolve(dirname(context.filename), specifier)).split(sep);

      if (to[0] === "services" && to.length > 2) {
        if (from[0] === "shared") {
          context.report({ node, messageId: "sharedToService", data: { to: to[1] } });
        } else if (from[0] === "services" && from[1] !== to[1] && from[1] !== "dev") {
          context.report({ node, messageId: "crossService", data: { from: from[1], to: to[1] } });
        } else if (from[0] === "clients") {
          context.report({ node, messageId: "clientToService", data: { from: from[1], to: to[1] } });
        }
      }
      if (to[0] === "clients" && to.length > 2) {
        if (from[0] === "shared") {
          context.report({ node, messageId: "sharedToClient", data: { to: to[1] } });
        } else if (from[0] === "services" && !(from[1] === "dev" && to[1] === "agent")) {
          context.report({ node, messageId: "serviceToClient", data: { from: from[1], to: to[1] } });
        } else if (from[0] === "clients" && from[1] !== to[1] && !isSdkEntry(to)) {
          context.report({ node, messageId: "crossClient", data: { from: from[1], to: to[1] } });
        }
      }
      if (to[0] === "shared" && to.length > 2) {
        const sameArea = from[0] === "shared" && from[1] === to[1];
        const isIndex = to.length === 3 && /^index(\.[jt]s)?$/.test(to[2] ?? "");
        if (!sameArea && !isIndex) {
          context.report({ node, messageId: "deepShared", data: { area: to[1], file: to.slice(2).join("/") } });
        }
      }
    }

    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

export default defineConfig([
  // What git ignores (dependencies, builds, local data, scratch files) is not ours to lint: one list, .gitignore.
  includeIgnoreFile(resolve(root, ".gitignore"), ".gitignore"),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    plugins: { architecture: { rules: { "import-boundaries": importBoundaries } } },
    rules: {
      "architecture/import-boundaries": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
        },
      ],
      // `for (;;)` and `while (true)` loops with an inner exit are a deliberate idiom here.
      "no-constant-condition": ["error", { checkLoops: "none" }],
    },
  },
]);
