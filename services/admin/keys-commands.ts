import { defineCommand } from "./admin-command.js";

/** `keys rotate`: answered by one gateway replica; every replica follows the change through its KV watch. */
export const rotateKeysCommand = defineCommand({
  name: "keys rotate",
  summary:
    "Make a new signing key (jwt: access tokens, url: signed URLs); the old one verifies until its last token or URL has expired, or --keep-seconds.",
  flags: [
    { flag: "kind", field: "kind", value: "jwt|url", help: "which key: jwt (access tokens) or url (signed URLs)" },
    {
      flag: "keep-seconds",
      field: "keep_seconds",
      value: "SECONDS",
      help: "how long the old key still verifies (0: refuse its tokens and URLs at once)",
    },
  ],
  rpc: "adminKeysRotate",
  describe: (rotation) =>
    [
      `${rotation.kind} signing key is now ${rotation.kid}`,
      ...rotation.retired.map(({ kid, not_after }) => `  ${kid} verifies until ${not_after}`),
    ].join("\n"),
});
