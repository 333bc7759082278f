export { ApiError, mayRetryCode } from "./api-error.js";
export { ComputeClient } from "./compute-client.js";
export type { ComputeClientOptions, RawResponse } from "./compute-client.js";
export { httpAnswerFacts, readEnvelope, refusalOf } from "./envelope.js";
export type { AnswerFacts } from "./envelope.js";
