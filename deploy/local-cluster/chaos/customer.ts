import { connectNats, requestRpc } from "../../../shared/nats/index.js";
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
    const business = await requestRpc(nc, "adminBusinessCreate", {
      app_id: appId,
      name: `chaos customer ${runId}`,
      operator: false,
    });
    const email = `chaos-${runId.toLowerCase()}@localhost`;
    const password = randomBase62(20);
    await requestRpc(nc, "adminUserCreate", {
      app_id: appId,
      business_id: business.business_id,
      email,
      password,
      role: "admin",
    });
    return { businessId: business.business_id, email, password };
  } finally {
    await nc.close();
  }
}
