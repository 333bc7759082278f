export {
  ADMIN_INBOX_PREFIX,
  BUCKET_KEYS,
  BUCKETS,
  checkKvKey,
  CONSUMERS,
  kvKey,
  kvStreams,
  OBJECT_STORES,
  queueGroups,
  STREAMS,
  subjects,
} from "./names.js";
export type { BucketName, ObjectStoreName } from "./names.js";
export { connectNats, natsAuthOptions } from "./connect.js";
export type { ConnectOptions, NatsCredentials } from "./connect.js";
export { assertFitsMessage, decodeJson, encodeJson, requestRpc, serveRpc } from "./rpc.js";
export type { RequestRpcOptions, RpcAddress, ServedRequest, ServeRpcOptions } from "./rpc.js";
export { INTERNAL_RPCS, rpcSubject } from "./internal-rpcs.js";
export type {
  InternalCommand,
  InternalReply,
  InternalRpcName,
  InternalRpcs,
  AddressedRpc,
  ReceivedCommand,
} from "./internal-rpcs.js";
export { JsonBucket, RecordBusyError } from "./json-bucket.js";
export { asServiceError, foundNoResponder, isNatsUnavailable, mayPassSoon } from "./unavailable.js";
export type { CasOptions, Versioned } from "./json-bucket.js";
export { ensureBuckets, ensureObjectStore, ensureStream, provisionedStreams } from "./topology.js";
export { jetStreamHealth } from "./jetstream-health.js";
export type { JetStreamHealth } from "./jetstream-health.js";
export type { TopologyOptions } from "./topology.js";
export { PingReply, servePing } from "./ping.js";
export { ensureMeteringStream, METERING_MAX_BYTES } from "./metering-stream.js";
export { watchConsumers } from "./consumer-health.js";
export type { DurableConsumer } from "./consumer-health.js";
export { ensureConsumer } from "./ensure-consumer.js";
