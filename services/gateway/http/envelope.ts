import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, errorSpec } from "../../../shared/errors/index.js";
import { challengeFor } from "./www-authenticate.js";

/** What a request was answered with when it got the error envelope: its access line carries it. */
export interface AnsweredError {
  code: string;
  /** For a 503: the failure behind it, which the caller's answer never shows. */
  cause?: string;
}

const answeredErrors = new WeakMap<FastifyRequest, AnsweredError>();

/** The error envelope `request` was answered with, if any. */
export function answeredErrorOf(request: FastifyRequest): AnsweredError | undefined {
  return answeredErrors.get(request);
}

/** Default wait suggested for retryable errors that do not carry their own. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** The success envelope, whatever the transport. */
export function successBody(message: string, payload: unknown): Record<string, unknown> {
  return { status: "SUCCESS", message, payload };
}

/** The error envelope, whatever the transport. */
export function errorBody(error: AppError): Record<string, unknown> {
  const body: Record<string, unknown> = { status: "ERROR", code: error.code, message: error.message };
  if (error.details !== undefined) body.details = error.details;
  return body;
}

/** `Retry-After` in whole seconds for a retryable error; undefined for the others. */
export function retryAfterOf(error: AppError): string | undefined {
  if (!errorSpec(error.code).retryable) return undefined;
  return String(Math.max(1, Math.ceil(error.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS)));
}

export function sendSuccess(reply: FastifyReply, message: string, payload: unknown, statusCode = 200): FastifyReply {
  return reply.code(statusCode).type("application/json").send(successBody(message, payload));
}

/**
 * Writes the error envelope; retryable errors carry `Retry-After` in whole seconds, and a
 * 401 its `WWW-Authenticate` challenge. A 413
 * ends the connection after the answer: the body was not read, and on a kept-alive
 * connection the rest of it would otherwise be awaited as this request's, stalling the next.
 */
export function sendError(reply: FastifyReply, error: AppError, cause?: string): FastifyReply {
  answeredErrors.set(reply.request, cause === undefined ? { code: error.code } : { code: error.code, cause });
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) reply.header("retry-after", retryAfter);
  if (error.httpStatus === 413) reply.header("connection", "close");
  if (error.httpStatus === 401) reply.header("www-authenticate", challengeFor(error.code, reply.request));
  return reply.code(error.httpStatus).type("application/json").send(errorBody(error));
}
