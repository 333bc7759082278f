/**
 * The soak's tenant: a customer business of the cluster's app with an admin of its own,
 * made afresh for each run through the operator commands. Not the cluster's admin: that
 * one's business is the operator's, which billing never charges, so "charged once" could
 * not be checked with it.
 */
import { Business, User } from "../../../shared/contract/index.js";
import { connectNats, requestRpc, subjects } from "../../../shared/nats/index.js";
import { createLogger, randomBase62 } from "../../../shared/runtime/index.js";

export interface SoakCustomer {
  businessId: string;
  email: string;
  password: string;
}

export async function createSoakCustomer(
  natsUrls: readonly string[],
  appId: string,
  runId: string,
): Promise<SoakCustomer> {
  const logger = createLogger({ service: "chaos", level: "warn" });
  const nc = await connectNats({ url: natsUrls.join(","), name: "cjs-chaos", logger });
  try {
    const business = await requestRpc(
      nc,
      subjects.adminBusinessCreate(),
      { app_id: appId, name: `chaos customer ${runId}`, operator: false },
      Business,
    );
    const email = `chaos-${runId.toLowerCase()}@localhost`;
    const password = randomBase62(20);
    await requestRpc(
      nc,
      subjects.adminUserCreate(),
      { app_id: appId, business_id: business.business_id, email, password, role: "admin" },
      User,
    );
    return { businessId: business.business_id, email, password };
  } finally {
    await nc.close();
  }
}
