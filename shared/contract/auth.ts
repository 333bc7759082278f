import { z } from "zod";
import { Email } from "./common.js";

export const LoginRequest = z.strictObject({
  email: Email,
  password: z.string().min(1).max(1024),
});
export type LoginRequest = z.infer<typeof LoginRequest>;

/** What every successful sign-in (password, OTP or refresh) returns. */
export const TokenPair = z.object({
  /** A JWT for `Authorization: Bearer`; valid for `expires_in` seconds. */
  access_token: z.string(),
  /** Opaque, single use: trade it at `/api/auth/refresh` for a new pair. */
  refresh_token: z.string(),
  token_type: z.literal("Bearer"),
  /** Lifetime of `access_token` in seconds. */
  expires_in: z.number().int().positive(),
});
export type TokenPair = z.infer<typeof TokenPair>;

export const RequestOtpRequest = z.strictObject({ email: Email });
export type RequestOtpRequest = z.infer<typeof RequestOtpRequest>;

/** Always the same answer, whether or not the e-mail has an account. */
export const RequestOtpResponse = z.object({
  /** Seconds until a code sent now expires. */
  expires_in: z.number().int().positive(),
});
export type RequestOtpResponse = z.infer<typeof RequestOtpResponse>;

export const VerifyOtpRequest = z.strictObject({
  email: Email,
  code: z.string().regex(/^\d{6}$/, "six digits"),
});
export type VerifyOtpRequest = z.infer<typeof VerifyOtpRequest>;

export const RefreshRequest = z.strictObject({ refresh_token: z.string().min(1).max(512) });
export type RefreshRequest = z.infer<typeof RefreshRequest>;

export const LogoutRequest = z.strictObject({ refresh_token: z.string().min(1).max(512) });
export type LogoutRequest = z.infer<typeof LogoutRequest>;

export const LogoutResponse = z.object({ logged_out: z.literal(true) });
export type LogoutResponse = z.infer<typeof LogoutResponse>;
