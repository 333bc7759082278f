import { PATH_PARAM_MAX_LENGTH } from "../../../shared/contract/index.js";
import { AppError, isAppError } from "../../../shared/errors/index.js";
import { asServiceError } from "../../../shared/nats/index.js";

/** Fastify's own errors for a request it could not read, by their stable `code`. */
const FASTIFY_ERRORS: Record<string, () => AppError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => new AppError("request.malformed_json", "The body is not valid JSON."),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    new AppError("request.malformed_json", "The body is empty but Content-Type says JSON; send `{}` for no fields."),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new AppError("request.unsupported_media_type", "Send the body as application/json."),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError("request.too_large", "The body is larger than this service accepts."),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new AppError("request.invalid", "Content-Length does not match the body."),
  FST_ERR_BAD_URL: () => new AppError("route.not_found", "The path is not a valid URL."),
  FST_ERR_MAX_PARAM_LENGTH: () =>
    new AppError(
      "request.invalid",
      `A path parameter is longer than ${PATH_PARAM_MAX_LENGTH} characters, the longest id a path takes.`,
      {
        details: { issues: [{ path: "path", message: `at most ${PATH_PARAM_MAX_LENGTH} characters` }] },
      },
    ),
};

/** By HTTP status, for client errors of the HTTP layer that carry no known code. */
const BY_STATUS: Record<number, () => AppError> = {
  400: () => new AppError("request.malformed_json", "The request could not be read."),
  404: () => new AppError("route.not_found"),
  413: () => new AppError("request.too_large"),
  415: () => new AppError("request.unsupported_media_type", "Send the body as application/json."),
};

/** Turns anything thrown while serving a request into the AppError the caller sees. */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const candidate = error as { code?: unknown; statusCode?: unknown } | null;
  const byCode = typeof candidate?.code === "string" ? FASTIFY_ERRORS[candidate.code] : undefined;
  if (byCode) return byCode();
  const byStatus = typeof candidate?.statusCode === "number" ? BY_STATUS[candidate.statusCode] : undefined;
  if (byStatus) return byStatus();
  return asServiceError(error);
}
