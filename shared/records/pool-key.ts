import { z } from "zod";
import { PoolId } from "../contract/index.js";

/**
 * Where jobs and nodes meet: a job is placed only on a node of the same pool key.
 *
 * - `op.<app>.<pool>`: an operator pool, as one application sees it. Jobs of that
 *   application meet only nodes registered by that application's operator business.
 * - `op.*.<pool>`: an operator pool declared shared (`CJS_SHARED_OPERATOR_POOLS`): jobs of
 *   every application meet nodes of every application's operator business.
 * - `sh.<business>.<pool>`: a self-hosted pool of one business.
 *
 * `*` is never part of an app id, so the shared key cannot be an application's.
 */
export function operatorPoolKey(appId: string, poolId: string, sharedPools: readonly string[]): string {
  return sharedPools.includes(poolId) ? `op.*.${poolId}` : `op.${appId}.${poolId}`;
}

export function selfHostedPoolKey(businessId: string, poolId: string): string {
  return `sh.${businessId}.${poolId}`;
}

/** Whether a stored pool key is an operator pool's (of any form, older ones included): only those are metered. */
export function isOperatorPoolKey(poolKey: string): boolean {
  return poolKey.startsWith("op.");
}

/**
 * The pool key placement uses for a stored job or node. An operator pool's key is worked
 * out again from the record's application and pool id and the current shared pools, so
 * records written with an older form (`op.<pool>`, which spanned applications) or before
 * a pool's sharing changed land in the pool the settings give them now, never a wider one.
 */
export function placementPoolKey(
  record: { app_id: string; pool_id: string; pool_key: string },
  sharedPools: readonly string[],
): string {
  return isOperatorPoolKey(record.pool_key)
    ? operatorPoolKey(record.app_id, record.pool_id, sharedPools)
    : record.pool_key;
}

/**
 * The `pool` label of a metric for a pool key: an operator pool by its key (the operator's
 * own applications and pools, a bounded set), every self-hosted pool as one `self_hosted`,
 * so no metric names a customer's business and the label set stays bounded.
 */
export function metricsPool(poolKey: string): string {
  return isOperatorPoolKey(poolKey) ? poolKey : "self_hosted";
}

/** A comma-separated list of pool ids; spaces around names and empty entries are dropped. */
const poolList = (defaultValue: string) =>
  z
    .string()
    .default(defaultValue)
    .transform((value) =>
      value
        .split(",")
        .map((pool) => pool.trim())
        .filter((pool) => pool !== ""),
    )
    .pipe(z.array(PoolId));

/** The pool settings the scheduler and the node-registry share; both must have the same values. */
export const PoolSettings = z.object({
  /** Operator pools, comma-separated; any other pool id names a self-hosted pool of the caller's business. */
  CJS_OPERATOR_POOLS: poolList("default"),
  /** Operator pools whose nodes run jobs of every application; the others are one per application. */
  CJS_SHARED_OPERATOR_POOLS: poolList(""),
});
export type PoolSettings = z.infer<typeof PoolSettings>;

/** Whether `poolId` names an operator pool (every other pool id is a self-hosted pool of the caller's business). */
export function isOperatorPool(settings: Pick<PoolSettings, "CJS_OPERATOR_POOLS">, poolId: string): boolean {
  return settings.CJS_OPERATOR_POOLS.includes(poolId);
}

/** The check that goes with `PoolSettings`: a shared pool must be an operator pool. */
export function checkSharedPools(settings: PoolSettings, ctx: z.RefinementCtx): void {
  const stray = settings.CJS_SHARED_OPERATOR_POOLS.filter((pool) => !settings.CJS_OPERATOR_POOLS.includes(pool));
  if (stray.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: ["CJS_SHARED_OPERATOR_POOLS"],
      message: `${stray.join(", ")} ${stray.length === 1 ? "is" : "are"} not in CJS_OPERATOR_POOLS; only an operator pool can be shared`,
    });
  }
}
