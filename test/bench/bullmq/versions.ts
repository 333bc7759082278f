import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const versionOf = (name: string): string => (require(`${name}/package.json`) as { version: string }).version;

/** What the BullMQ side runs on, for the tables' notes: BullMQ's default connection, which is ioredis. */
export const BULLMQ_STACK = `BullMQ ${versionOf("bullmq")} on ioredis ${versionOf("ioredis")} (BullMQ's own connection from { host, port })`;
