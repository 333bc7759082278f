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
