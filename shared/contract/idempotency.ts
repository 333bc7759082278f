import type { RpcName } from "./routes.js";

/** The request header that makes a submit or retry idempotent (docs/api.md, "Idempotent requests"). */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** The answer header of a repeat: the answer is the first request's, replayed. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";

/** The operations that take an Idempotency-Key: the gateway honours it, the SDK sends one, the OpenAPI document lists it. */
export const IDEMPOTENCY_KEY_ROUTES: ReadonlySet<RpcName> = new Set<RpcName>(["submitJob", "retryJob"]);

/** 1 to 255 printable ASCII characters (space to tilde). */
export const IDEMPOTENCY_KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
