export { ComputeClient } from "./compute-client.js";
export type { ComputeClientOptions, RawResponse } from "./compute-client.js";
export { readEnvelope } from "./envelope.js";
export type { EnvelopeFacts } from "./envelope.js";
