import { z } from "zod";
import { ERROR_CODES } from "../errors/index.js";

/** Every successful response: `payload` is always an object. */
export const SuccessEnvelope = z.object({
  status: z.literal("SUCCESS"),
  message: z.string(),
  payload: z.record(z.string(), z.unknown()),
});
export type SuccessEnvelope = z.infer<typeof SuccessEnvelope>;

/** Every failure: no `payload`; clients match on `code`. */
export const ErrorEnvelope = z.object({
  status: z.literal("ERROR"),
  code: z.enum(ERROR_CODES as [string, ...string[]]),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;
