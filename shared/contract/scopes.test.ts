import { describe, expect, it } from "vitest";
import { RPC_ROUTES } from "./routes.js";
import { grantsScope, ROUTE_SCOPES, scopeOf, scopesOf } from "./scopes.js";

describe("route scopes", () => {
  it("name a scope for every route a user's API key may call, and none for the others", () => {
    for (const [name, route] of Object.entries(RPC_ROUTES)) {
      const scope = ROUTE_SCOPES[name as keyof typeof ROUTE_SCOPES];
      if (route.auth === "user" || route.auth === "user_or_node") expect(scope, name).not.toBeNull();
      else expect(scope, name).toBeNull();
      expect(scopeOf(route)).toBe(scope);
    }
  });

  it("ask jobs:write besides schedules:write of the operations that let a schedule make jobs, and nothing more of the others", () => {
    expect(scopesOf(RPC_ROUTES.createSchedule)).toEqual(["schedules:write", "jobs:write"]);
    expect(scopesOf(RPC_ROUTES.resumeSchedule)).toEqual(["schedules:write", "jobs:write"]);
    expect(scopesOf(RPC_ROUTES.pauseSchedule)).toEqual(["schedules:write"]);
    expect(scopesOf(RPC_ROUTES.submitJob)).toEqual(["jobs:write"]);
    expect(scopesOf(RPC_ROUTES.login)).toEqual([]);
  });

  it("grant everything to a key without scopes, and only what it lists to one with them", () => {
    expect(grantsScope(null, "jobs:write")).toBe(true);
    expect(grantsScope(["jobs:read"], "jobs:read")).toBe(true);
    expect(grantsScope(["jobs:read"], "jobs:write")).toBe(false);
    expect(grantsScope([], null)).toBe(true);
  });
});
