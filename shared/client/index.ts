export { ComputeClient } from "./compute-client.js";
export type { ComputeClientOptions, RawResponse } from "./compute-client.js";
