import fc from "fast-check";
import { z } from "zod";

/** The part of JSON Schema that `z.toJSONSchema` writes for the request schemas of `RPC_ROUTES`. */
interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
}

/** Values a generated field may be pinned to, by property name (e.g. a long poll's wait, kept at 0). */
export type Pins = Record<string, fc.Arbitrary<unknown>>;

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === "date-time")
    return fc
      .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
      .map((date) => date.toISOString());
  if (schema.format === "email")
    return fc
      .tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/), fc.constantFrom("example.test", "localhost"))
      .map(([local, host]) => `${local}@${host}`);
  if (schema.format === "uri") return fc.webUrl();
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 64, 64);
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern);
    // fast-check cannot generate from a lookahead: generate without it, keep what the whole pattern takes.
    const generated = fc.stringMatching(new RegExp(schema.pattern.replace(/\(\?[!=][^)]*\)/g, "")));
    return generated.filter(
      (text) => pattern.test(text) && text.length >= minLength && text.length <= (schema.maxLength ?? Infinity),
    );
  }
  return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
}

function numberOf(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min =
    schema.exclusiveMinimum !== undefined
      ? schema.exclusiveMinimum + (integer ? 1 : 0.001)
      : (schema.minimum ?? -1_000_000);
  const max = Math.min(schema.maximum ?? 1_000_000, 1_000_000_000);
  if (integer) return fc.integer({ min: Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER), max: Math.floor(max) });
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/**
 * An arbitrary of values that (mostly) match `schema`: optional properties come and go,
 * patterns and bounds are followed. Refinements the JSON Schema cannot say are not, so a
 * test checks each value against the zod schema itself before it expects a success.
 */
export function arbitraryOf(schema: JsonSchema, pins: Pins = {}): fc.Arbitrary<unknown> {
  if (schema.anyOf) {
    const { anyOf, ...around } = schema;
    // An option without a type of its own (`{ required: [...] }`) narrows the schema around it.
    const narrowed = (option: JsonSchema): JsonSchema =>
      option.type === undefined && around.type !== undefined
        ? { ...around, ...option, required: [...(around.required ?? []), ...(option.required ?? [])] }
        : option;
    return fc.oneof(...anyOf.map((option) => arbitraryOf(narrowed(option), pins)));
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return numberOf(schema, true);
    case "number":
      return numberOf(schema, false);
    case "string":
      return stringOf(schema);
    case "array":
      return fc.array(arbitraryOf(schema.items ?? {}, pins), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 3, 3),
      });
    case "object": {
      if (schema.properties) {
        const required = new Set(schema.required ?? []);
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, property] of Object.entries(schema.properties))
          record[name] = pins[name] ?? arbitraryOf(property, pins);
        const requiredKeys = Object.keys(record).filter((name) => required.has(name) || pins[name] !== undefined);
        return fc.record(record, { requiredKeys });
      }
      if (typeof schema.additionalProperties === "object") {
        return fc.dictionary(
          stringOf(schema.propertyNames ?? { type: "string", minLength: 1 }),
          arbitraryOf(schema.additionalProperties, pins),
          { maxKeys: 3 },
        );
      }
      return fc.constant({});
    }
    default:
      return fc.jsonValue();
  }
}

/** An arbitrary of request bodies made from a zod request schema, through its JSON Schema (the OpenAPI document's). */
export function bodiesOf(schema: z.ZodType, pins: Pins = {}): fc.Arbitrary<unknown> {
  return arbitraryOf(z.toJSONSchema(schema, { io: "input" }) as JsonSchema, pins);
}

/** Wildcards, separators and control characters that no id may carry into a subject or key. */
export const HOSTILE_IDS = [
  "*",
  ">",
  ".",
  " ",
  "\0",
  "/",
  "..",
  "../x",
  "key_*",
  "key_>",
  "job_*",
  "nod_>",
  "biz_*",
  "a b",
  "x\0y",
  "job_0VbeygdjkkWnwRC9cwe1.x",
] as const;

/** A JSON path into a body: property names and array indexes. */
type Path = Array<string | number>;

function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (Array.isArray(value))
    return value.flatMap((item, index) => [[...prefix, index], ...pathsOf(item, [...prefix, index])]);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([name, item]) => [[...prefix, name], ...pathsOf(item, [...prefix, name])]);
  }
  return [];
}

function setAt(body: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...Path];
  if (Array.isArray(body)) return body.map((item, index) => (index === head ? setAt(item, rest, replacement) : item));
  const record = body as Record<string, unknown>;
  return { ...record, [head]: setAt(record[head], rest, replacement) };
}

/** Values of the wrong JSON type for nearly every field (a valid one is still possible: the test checks). */
const WRONG_TYPES: unknown[] = [{ $: [] }, [], "text", true, -1.5, 1e21];

/** A size within the default 1 MiB body limit but past every string field's maximum. */
const HUGE_STRING_LENGTH = 300_000;

export interface Mutation {
  kind: string;
  apply(body: unknown): unknown;
}

/**
 * Mutations of a body: an unknown field, a field of the wrong type or null, a hostile id,
 * a huge string, anywhere in the body (nested too), or a body that is not an object at all.
 */
export function mutationOf(fields: readonly string[]): fc.Arbitrary<Mutation> {
  const anywhere = (kind: string, replacement: fc.Arbitrary<unknown>, prefer: (path: Path) => boolean = () => true) =>
    fc.tuple(fc.nat(), replacement).map(
      ([pick, value]): Mutation => ({
        kind,
        apply: (body) => {
          const all: Path[] = [...pathsOf(body), ...fields.map((field) => [field])];
          const preferred = all.filter(prefer);
          const paths = preferred.length > 0 ? preferred : all;
          return paths.length === 0 ? setAt(body, [], value) : setAt(body, paths[pick % paths.length]!, value);
        },
      }),
    );
  const isIdField = (path: Path) => {
    const last = path[path.length - 1];
    return typeof last === "string" && (last.endsWith("_id") || last === "cursor");
  };
  return fc.oneof(
    fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), fc.jsonValue()).map(
      ([name, value]): Mutation => ({
        kind: "unknown field",
        apply: (body) => ({ ...(body as Record<string, unknown>), [`zz_${name}`]: value }),
      }),
    ),
    anywhere("wrong type", fc.constantFrom(...WRONG_TYPES)),
    anywhere("null", fc.constant(null)),
    anywhere("hostile id", fc.constantFrom(...HOSTILE_IDS), isIdField),
    anywhere("huge string", fc.constant("x".repeat(HUGE_STRING_LENGTH))),
    fc
      .constantFrom<unknown>(null, 0, 42, "body", [], [{}], true)
      .map((value): Mutation => ({ kind: "not an object", apply: () => value })),
  );
}
