import { ApiError } from "../../clients/sdk/src/index.js";

/** The refusal a call failed with (the SDK's ApiError: code, status, details, request id); fails the test when the call succeeds or fails some other way. */
export async function failureOf(call: Promise<unknown>): Promise<ApiError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return error;
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
    if (error instanceof ApiError) return error.code;
    throw error;
  }
}
