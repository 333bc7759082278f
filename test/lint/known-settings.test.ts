import { describe, expect, it } from "vitest";
import { AgentConfig } from "../../clients/agent/config.js";
import { BillingConfig } from "../../services/billing/config.js";
import { DevConfig } from "../../services/dev/config.js";
import { GatewayConfig } from "../../services/gateway/config.js";
import { LogRelayConfig } from "../../services/log-relay/config.js";
import { NodeRegistryConfig } from "../../services/node-registry/config.js";
import { SchedulerConfig } from "../../services/scheduler/config.js";
import { WebhooksConfig } from "../../services/webhooks/config.js";
import { KNOWN_SETTINGS, settingNames } from "../../shared/runtime/index.js";

describe("KNOWN_SETTINGS", () => {
  it("is exactly the CJS_* keys of every process's config schema", () => {
    const fromSchemas = [
      ...settingNames([
        SchedulerConfig,
        GatewayConfig,
        NodeRegistryConfig,
        LogRelayConfig,
        BillingConfig,
        DevConfig,
        AgentConfig,
        WebhooksConfig,
      ]),
    ]
      .filter((name) => name.startsWith("CJS_"))
      .sort();
    const listed = [...KNOWN_SETTINGS].sort();
    expect(
      listed,
      `shared/runtime/known-settings.ts should list:\n${fromSchemas.map((name) => `  "${name}",`).join("\n")}`,
    ).toEqual(fromSchemas);
  });
});
