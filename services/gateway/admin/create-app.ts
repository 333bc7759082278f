import type { App, CreateAppRequest } from "../../../shared/contract/index.js";
import type { GatewayContext } from "../gateway-context.js";

/** Operator command `app create`: an application id is issued once and never reused. */
export function createApp(gw: GatewayContext) {
  return async ({ id, name }: CreateAppRequest): Promise<App> => {
    const app: App = { app_id: id, name, created_at: new Date(gw.clock.now()).toISOString() };
    await gw.store.apps.create(id, app);
    return app;
  };
}
