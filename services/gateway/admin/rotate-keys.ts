import {
  SubmitJobRequest,
  type RotateKeysRequest,
  type RotateKeysResponse,
  type SigningKeyKind,
} from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { GatewayConfig } from "../config.js";
import type { GatewayContext } from "../gateway-context.js";

/** Room for clocks of replicas that disagree a little: a retired key outlives its last token by this much. */
const CLOCK_SKEW_SECONDS = 60;

/** The longest a job may run: an agent's upload URL lives that long plus the artifact URL lifetime. */
const MAX_JOB_TIMEOUT_SECONDS = SubmitJobRequest.shape.timeout_seconds.unwrap().maxValue ?? 0;

/** How long a retired key must still verify: until the last token or URL it signed can have expired. */
export function retiredKeyLifetimeSeconds(kind: SigningKeyKind, config: Readonly<GatewayConfig>): number {
  const longest =
    kind === "jwt"
      ? config.CJS_ACCESS_TOKEN_TTL_SECONDS
      : Math.max(config.CJS_LOG_STREAM_URL_TTL_SECONDS, config.CJS_ARTIFACT_URL_TTL_SECONDS + MAX_JOB_TIMEOUT_SECONDS);
  return longest + CLOCK_SKEW_SECONDS;
}

/**
 * Operator command `keys rotate`: a new signing key in NATS KV, which every replica's
 * watch picks up. Keys given by a setting are rotated by changing the setting instead.
 */
export function rotateKeys(gw: GatewayContext) {
  return async ({ kind, keep_seconds }: RotateKeysRequest): Promise<RotateKeysResponse> => {
    const keys = gw.signingKeys[kind];
    if (keys.variable !== null) {
      throw new AppError(
        "state.conflict",
        `The ${kind} signing keys come from ${keys.variable}; rotate them by changing it (docs/operations.md).`,
        {
          details: { state: "configured" },
        },
      );
    }
    const keepSeconds = keep_seconds ?? retiredKeyLifetimeSeconds(kind, gw.config);
    const rotation = await keys.rotate(gw.clock.now() + keepSeconds * 1000);
    gw.logger.info(
      { kind, signing_kid: rotation.kid, retired_kids: rotation.retired.map(({ kid }) => kid) },
      "signing key rotated",
    );
    return { kind, ...rotation };
  };
}
