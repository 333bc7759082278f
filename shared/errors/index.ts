export { ERROR_CATALOGUE, ERROR_CODES, errorSpec, isErrorCode } from "./catalogue.js";
export type { ErrorCode, ErrorSpec } from "./catalogue.js";
export { AppError, isAppError } from "./app-error.js";
export type { ErrorData, ErrorDetails } from "./app-error.js";
