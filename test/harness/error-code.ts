import { ApiError } from "../../clients/sdk/src/index.js";
import { AppError } from "../../shared/errors/index.js";

/** A refusal as a test sees it: the SDK's ApiError over HTTP, an AppError over NATS. */
export type Refusal = ApiError | AppError;

function isRefusal(error: unknown): error is Refusal {
  return error instanceof ApiError || error instanceof AppError;
}

/** The refusal a call failed with; fails the test when the call succeeds or fails some other way. */
export async function failureOf(call: Promise<unknown>): Promise<Refusal> {
  try {
    await call;
  } catch (error) {
    if (isRefusal(error)) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

/** The error code a call failed with; fails the test when the call succeeds or fails some other way. */
export async function errorCodeOf(call: Promise<unknown>): Promise<string> {
  return (await failureOf(call)).code;
}

/** `"ok"` when the call succeeds, else its error code: for waiting on a call that may pass or fail. */
export async function outcomeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    if (isRefusal(error)) return error.code;
    throw error;
  }
}
