import underPressure from "@fastify/under-pressure";
import type { FastifyInstance } from "fastify";
import { AppError } from "../../../shared/errors/index.js";

/**
 * Refuses new requests with 503 `service.unavailable` while the event loop is saturated: the
 * mean delay of its turns over the last second (sampled by @fastify/under-pressure) is over
 * `maxEventLoopDelayMs`. A saturated gateway that kept accepting would answer everyone late
 * and time out many; refusing at once, with `Retry-After`, lets clients and the load
 * balancer send the work elsewhere or later. Requests already under way go on. 0 turns it off.
 */
export function shedLoad(app: FastifyInstance, options: { maxEventLoopDelayMs: number; retryAfterSeconds: number }) {
  if (options.maxEventLoopDelayMs === 0) return;
  const { retryAfterSeconds } = options;
  void app.register(underPressure, {
    maxEventLoopDelay: options.maxEventLoopDelayMs,
    pressureHandler: async () => {
      throw new AppError("service.unavailable", "The gateway is overloaded; try again shortly.", {
        details: { retry_after_seconds: retryAfterSeconds },
        retryAfterSeconds,
      });
    },
  });
}
