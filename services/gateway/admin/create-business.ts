import type { Business, CreateBusinessRequest } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { newId } from "../../../shared/runtime/index.js";
import type { GatewayContext } from "../gateway-context.js";

/** Operator command `business create`: a tenant within an application. */
export function createBusiness(gw: GatewayContext) {
  return async ({ app_id, name, operator }: CreateBusinessRequest): Promise<Business> => {
    if (!(await gw.store.apps.get(app_id))) throw new AppError("resource.not_found", `No application ${app_id}.`);
    const business: Business = {
      business_id: newId("biz"),
      app_id,
      name,
      operator,
      created_at: new Date(gw.clock.now()).toISOString(),
    };
    await gw.store.businesses.create(business.business_id, business);
    return business;
  };
}
