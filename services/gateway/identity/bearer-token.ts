/**
 * The token of an `Authorization: Bearer <token>` header, or `undefined` when the header
 * has another shape. The scheme is matched case-insensitively and may be followed by any
 * run of spaces or tabs (RFC 7235 §2.1); the token is a token68 (RFC 7235 §2.1, RFC 6750 §2.1).
 */
export function bearerToken(authorization: string): string | undefined {
  return /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization.trim())?.[1];
}

/** Whether a header names the Bearer scheme at all, whatever follows it: a bearer credential was offered. */
export function offersBearer(authorization: string | undefined): boolean {
  return authorization !== undefined && /^Bearer(?:[ \t]|$)/i.test(authorization.trim());
}
