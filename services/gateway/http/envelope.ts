import type { FastifyReply } from "fastify";
import { AppError, errorSpec } from "../../../shared/errors/index.js";

/** Default wait suggested for retryable errors that do not carry their own. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

export function sendSuccess(reply: FastifyReply, message: string, payload: unknown, statusCode = 200): FastifyReply {
  return reply.code(statusCode).type("application/json").send({ status: "SUCCESS", message, payload });
}

/** Writes the error envelope; retryable errors carry `Retry-After` in whole seconds. */
export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (errorSpec(error.code).retryable) {
    reply.header("retry-after", String(Math.max(1, Math.ceil(error.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS))));
  }
  const body: Record<string, unknown> = { status: "ERROR", code: error.code, message: error.message };
  if (error.details !== undefined) body.details = error.details;
  return reply.code(error.httpStatus).type("application/json").send(body);
}
