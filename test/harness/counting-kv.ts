import type { KV } from "@nats-io/kv";

const WRITES = new Set<PropertyKey>(["put", "create", "update"]);

/**
 * A real KV handle that counts its `get` calls and its writes (`put`, `create`, `update`):
 * every call, counted or not, goes to the handle itself, so the broker is the real one and
 * only the reads and writes a piece of code makes are observed.
 */
export function countingKv(kv: KV): { kv: KV; reads: () => number; writes: () => number } {
  let reads = 0;
  let writes = 0;
  const counted = new Proxy(kv, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (property === "get")
        return (...args: unknown[]) => {
          reads += 1;
          return bound(...args);
        };
      if (!WRITES.has(property)) return bound;
      return (...args: unknown[]) => {
        writes += 1;
        return bound(...args);
      };
    },
  });
  return { kv: counted, reads: () => reads, writes: () => writes };
}
