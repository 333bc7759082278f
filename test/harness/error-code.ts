import { AppError } from "../../shared/errors/index.js";

/** The error code a call failed with; fails the test when the call succeeds or fails some other way. */
export async function errorCodeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  throw new Error("expected the call to fail");
}

/** `"ok"` when the call succeeds, else its error code: for waiting on a call that may pass or fail. */
export async function outcomeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}
