import type { Socket } from "node:net";
import { STATUS_CODES } from "node:http";
import type { FastifyBaseLogger } from "fastify";
import { AppError } from "../../../shared/errors/index.js";
import { errorBody, retryAfterOf } from "./envelope.js";

/** What the caller did wrong, by the code of Node's HTTP parser; anything else reads as the generic 400. */
const PARSER_REASONS: Record<string, string> = {
  HPE_INVALID_CHUNK_SIZE: "a chunk size of the chunked body is not valid",
  HPE_INVALID_CHUNK_EXTENSIONS: "a chunk extension of the chunked body is not valid",
  HPE_UNEXPECTED_CONTENT_LENGTH: "Content-Length is given twice, or together with Transfer-Encoding",
  HPE_INVALID_CONTENT_LENGTH: "Content-Length is not a single decimal number",
  HPE_INVALID_TRANSFER_ENCODING: "Transfer-Encoding is not valid",
  HPE_INVALID_HEADER_TOKEN: "a header name holds a character a name may not hold (such as a space before the colon)",
  HPE_INVALID_METHOD: "the method is not valid",
  HPE_INVALID_URL: "the request target is not valid",
  HPE_INVALID_VERSION: "the HTTP version is not valid",
  HPE_LF_EXPECTED: "a line does not end in CRLF",
  HPE_CR_EXPECTED: "a line does not end in CRLF",
};

/** The envelope error for a request Node's HTTP server refused before fastify saw it. */
export function clientErrorOf(error: { code?: unknown }): AppError {
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return new AppError(
      "request.headers_too_large",
      "The request line and headers are larger than this server reads; send fewer or shorter headers.",
    );
  }
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return new AppError("request.timeout", "The request did not arrive in full in time; send it again.", {
      retryAfterSeconds: 1,
    });
  }
  const reason = typeof error.code === "string" ? PARSER_REASONS[error.code] : undefined;
  return new AppError("request.invalid", `The request is not valid HTTP/1.1${reason ? `: ${reason}` : ""}.`);
}

/** Writes the envelope of `appError` as a whole HTTP/1.1 answer on the raw socket, then closes it. */
export function answerOnSocket(socket: Socket, appError: AppError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(appError));
  const retryAfter = retryAfterOf(appError);
  const head = [
    `HTTP/1.1 ${appError.httpStatus} ${STATUS_CODES[appError.httpStatus] ?? ""}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    ...(retryAfter === undefined ? [] : [`Retry-After: ${retryAfter}`]),
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
}

/**
 * fastify's `clientErrorHandler`: answers the envelope on the raw socket and closes the
 * connection, since the parser cannot find where the next request would begin.
 */
export function clientErrorHandler(logger: FastifyBaseLogger) {
  return (error: Error & { code?: unknown }, socket: Socket): void => {
    // A reset connection has no one to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const appError = clientErrorOf(error);
    logger.info({ code: appError.code, parser_code: error.code }, "request refused by the HTTP parser");
    answerOnSocket(socket, appError);
  };
}
