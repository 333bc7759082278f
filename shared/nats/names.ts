import { AppError } from "../errors/index.js";
import { checkId, type IdKind, isId, MalformedIdError } from "../contract/index.js";

/**
 * Every NATS subject, stream and KV bucket name of the project, in one place.
 * Commands are imperative (`admin.app.create`), events past tense (`credentials.revoked`).
 * Every id that goes into a subject or a key is checked by its format here first
 * (`checkId`), so no caller-chosen text becomes a wildcard or an extra level.
 */
const ROOT = "cjs";

/** KV buckets and what each holds. Keys never contain user input verbatim (see `kvKey`). */
export const BUCKETS = {
  /** app id → application record. */
  apps: "cjs_apps",
  /** business id → business record. */
  businesses: "cjs_businesses",
  /** user id → user record (with the password hash). */
  users: "cjs_users",
  /** `<app>.<business>.<user id>` → {}: lists a business's users without scanning every user. */
  businessUsers: "cjs_business_users",
  /** `<app>.<email key>` → user id; the create of this key is what makes e-mails unique per app. */
  userEmails: "cjs_user_emails",
  /** key id → API key record (only the key's hash). */
  apiKeys: "cjs_api_keys",
  /** `<user id>.<key id>` → {}: lists a user's keys without scanning every key. */
  apiKeyOwners: "cjs_api_key_owners",
  /** session id → a sign-in session (refresh-token family). */
  sessions: "cjs_sessions",
  /** `<app>.<email key>` → pending sign-in code; `<app>.reset.<email key>` → pending password-reset code (hashed, tries left, expiry). */
  otpCodes: "cjs_otp_codes",
  /** `acct.<app>.<email key>` or `addr.<ip key>` → failed sign-in counter. */
  loginGuards: "cjs_login_guards",
  /** `current` → the JWT signing key pair shared by every gateway replica. */
  signingKeys: "cjs_signing_keys",
  /** `<app>.<business>.<job id>` → job record (scheduler). */
  jobs: "cjs_jobs",
  /** node id → node record (node-registry). */
  nodes: "cjs_nodes",
  /** node id → the attempts holding its capacity (scheduler). */
  allocations: "cjs_allocations",
  /** `<app>.<business>.<job id>.<artifact id>` → the artifact's record: lists a job's artifacts (gateway). */
  artifactIndex: "cjs_artifact_index",
  /** API key id → the key's submits of the last hour and its jobs that have not ended (scheduler, the quota actor). */
  keyQuotas: "cjs_key_quotas",
  /** `scheduler.members.<instance>` → each live scheduler replica; `scheduler.partitions.<nn>` → the replica that owns a job partition; both renewed by compare-and-set (scheduler). */
  leases: "cjs_leases",
  /** `<app>.<business>` → the business's subscription; absent means the default plan (billing). */
  subscriptions: "cjs_subscriptions",
  /** `<provider>.<event id>` → a payment-provider event received: its create is what applies each event once (billing). */
  webhookEvents: "cjs_webhook_events",
  /** SHA-256 of a sandbox checkout session id → the session (billing's sandbox payment provider). */
  checkoutSessions: "cjs_checkout_sessions",
  /** `sandbox-webhook` → the secret the sandbox provider signs its webhooks with (billing). */
  billingSecrets: "cjs_billing_secrets",
  /** `<app>.<user id>` → the user's request counts in the current minute and hour windows (gateway). */
  rateLimits: "cjs_rate_limits",
  /** `<app>.<business>` → the business's credit balance, its period, its entries not yet written out and its API keys' spend this month (billing). */
  creditAccounts: "cjs_credit_accounts",
  /** `<app>.<business>.n.<seq>` → a ledger entry; `<app>.<business>.i.<entry id>` → its seq, the proof it was applied (billing). */
  creditEntries: "cjs_credit_entries",
  /** `<app>.<business>.<SHA-256 of an Idempotency-Key>` → what the first request with that key asked and answered (gateway); kept 24 h. */
  idempotency: "cjs_idempotency",
  /** `<app>.<business>.<webhook id>` → an outgoing webhook: its URL, events and secret salt (webhooks). */
  webhooks: "cjs_webhooks",
  /** `<app>.<business>.<webhook id>.<delivery id>` → one delivery of an event: its payload and attempts, kept 7 days (webhooks). */
  webhookDeliveries: "cjs_webhook_deliveries",
  /** `current` → the key webhook secrets are derived from, when no setting gives one (webhooks). */
  webhookKeys: "cjs_webhook_keys",
  /** `<app>.<business>.<schedule id>` → a schedule: its cron, job template and next tick (scheduler). */
  schedules: "cjs_schedules",
} as const;

/** JetStream object stores. */
export const OBJECT_STORES = {
  /** `<app>.<business>.<job id>/<artifact id>` → an artifact's bytes (gateway). */
  artifacts: "cjs_artifacts",
} as const;

/** JetStream streams. */
export const STREAMS = {
  /** Log lines, by job and attempt (log-relay). */
  logs: "CJS_LOGS",
  /** Ends of started attempts on operator pools, published by the scheduler before the change; billing charges them. */
  metering: "CJS_METERING",
  /** Deliveries due, one message per delivery (work queue, webhooks). */
  webhookDeliveries: "CJS_WEBHOOK_DELIVERIES",
  /** Counters (`Nats-Incr`) of log bytes stored, per node and hour and per business and day (log-relay). */
  logUsage: "CJS_LOG_USAGE",
  /** Counters (`Nats-Incr`) of the bytes of artifacts each business keeps stored (gateway). */
  artifactUsage: "CJS_ARTIFACT_USAGE",
} as const;

/** Durable consumers. */
export const CONSUMERS = {
  /**
   * Retired: the scheduler replicas shared it over `KV_cjs_jobs` until each replica kept
   * the queue from its own watch. A scheduler deletes it when it finds it (upgrades).
   */
  retiredScheduler: "scheduler",
  /** Shared by every billing replica: each metering message is charged by one. */
  billingMetering: "billing-metering",
  billingLedgerAudit: "billing-ledger-audit", // on KV_cjs_jobs, shared by every billing replica: each job record revision is audited by one
  /** On `KV_cjs_jobs`, filtered to the businesses that have webhooks; shared by every webhooks replica. */
  webhookEvents: "webhook-events",
  /** On `CJS_WEBHOOK_DELIVERIES`, shared by every webhooks replica: each delivery is POSTed by one. */
  webhookDeliveries: "webhook-deliveries",
} as const;
/** The stream behind a KV bucket, and the subjects of all its keys (for consumers that read records as messages). */
export const kvStreams = {
  name: (bucket: BucketName) => `KV_${bucket}`,
  allKeys: (bucket: BucketName) => `$KV.${bucket}.>`,
  /** The key of a record message's subject. */
  keyOf: (bucket: BucketName, subject: string) => subject.slice(`$KV.${bucket}.`.length),
} as const;

export type BucketName = (typeof BUCKETS)[keyof typeof BUCKETS];
export type ObjectStoreName = (typeof OBJECT_STORES)[keyof typeof OBJECT_STORES];

/** A subject level the service makes itself (an operation, a replica's or an upload's id): never a wildcard or a dot. */
const SUBJECT_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

function checkedToken(token: string): string {
  if (!SUBJECT_TOKEN.test(token))
    throw new AppError("internal.error", "A subject was to be built from a malformed name.");
  return token;
}

/** A UTC period as digits (`YYYYMMDD`, `YYYYMMDDHH`). */
function checkedWindow(window: string, digits: number): string {
  if (!new RegExp(`^\\d{${digits}}$`).test(window))
    throw new AppError("internal.error", "A subject was to be built from a malformed period.");
  return window;
}

function checkedAttempt(attempt: number): number {
  if (!Number.isSafeInteger(attempt) || attempt < 1)
    throw new AppError("request.invalid", "An attempt is a whole number from 1.");
  return attempt;
}

/**
 * The operator CLI's reply inboxes: its NATS user needs only publish `cjs.admin.>` and
 * subscribe `<prefix>.>` (the services' users reply with `allow_responses`).
 */
export const ADMIN_INBOX_PREFIX = "_INBOX_admin";

export const subjects = {
  /** Operator commands, answered by one gateway replica (queue group). */
  adminAppCreate: () => `${ROOT}.admin.app.create`,
  adminBusinessCreate: () => `${ROOT}.admin.business.create`,
  adminUserCreate: () => `${ROOT}.admin.user.create`,
  adminUserList: () => `${ROOT}.admin.user.list`,
  adminUserDisable: () => `${ROOT}.admin.user.disable`,
  adminUserEnable: () => `${ROOT}.admin.user.enable`,
  adminUserSetRole: () => `${ROOT}.admin.user.set-role`,
  adminKeysRotate: () => `${ROOT}.admin.keys.rotate`,
  /** Operator command answered by one billing replica. */
  adminCreditSet: () => `${ROOT}.admin.credit.set`,
  /** Job RPCs, answered by one scheduler replica. */
  jobSubmit: () => `${ROOT}.scheduler.jobs.submit`,
  jobRetrieve: () => `${ROOT}.scheduler.jobs.retrieve`,
  jobList: () => `${ROOT}.scheduler.jobs.list`,
  /** Answered by one scheduler replica only: the page of its own partitions' jobs (a list is gathered from every owner). */
  jobListShard: (instance: string) => `${ROOT}.scheduler.replica.${checkedToken(instance)}.jobs.list`,
  /** Answered by one scheduler replica only: how many jobs of a concurrency key of its partitions are assigned or running. */
  concurrencyInUse: (instance: string) => `${ROOT}.scheduler.replica.${checkedToken(instance)}.concurrency`,
  jobCancel: () => `${ROOT}.scheduler.jobs.cancel`,
  jobRetry: () => `${ROOT}.scheduler.jobs.retry`,
  jobDelete: () => `${ROOT}.scheduler.jobs.delete`,
  /** Schedule RPCs, answered by one scheduler replica. */
  scheduleCreate: () => `${ROOT}.scheduler.schedules.create`,
  scheduleList: () => `${ROOT}.scheduler.schedules.list`,
  scheduleRetrieve: () => `${ROOT}.scheduler.schedules.retrieve`,
  schedulePause: () => `${ROOT}.scheduler.schedules.pause`,
  scheduleResume: () => `${ROOT}.scheduler.schedules.resume`,
  scheduleDelete: () => `${ROOT}.scheduler.schedules.delete`,
  nodePoll: () => `${ROOT}.scheduler.nodes.poll`,
  nodeResult: () => `${ROOT}.scheduler.nodes.result`,
  /** Answered by the owner of one job partition (its number, two digits): a node's result for a job of it. */
  nodeResultOfPartition: (partition: string) => `${ROOT}.scheduler.partition.${checkedToken(partition)}.nodes.result`,
  nodeDelivered: () => `${ROOT}.scheduler.nodes.delivered`,
  /** Answered by the owner of one job partition: a gateway gave a node an attempt of it from its `assigned` event. */
  nodeDeliveredOfPartition: (partition: string) =>
    `${ROOT}.scheduler.partition.${checkedToken(partition)}.nodes.delivered`,
  /** Node RPCs, answered by one node-registry replica. */
  nodeRegister: () => `${ROOT}.registry.nodes.register`,
  nodeHeartbeat: () => `${ROOT}.registry.nodes.heartbeat`,
  nodeDrain: () => `${ROOT}.registry.nodes.drain`,
  nodeList: () => `${ROOT}.registry.nodes.list`,
  nodeGet: () => `${ROOT}.registry.nodes.get`,
  nodeDelete: () => `${ROOT}.registry.nodes.delete`,
  /** Log batches, answered by one log-relay replica. */
  logsPush: () => `${ROOT}.logrelay.logs.push`,
  /** A job's log totals (dropped lines), answered by one log-relay replica. */
  logsSummary: () => `${ROOT}.logrelay.logs.summary`,
  /** Removes every stored log line (and drop count) of one job, answered by one log-relay replica. */
  logsPurge: () => `${ROOT}.logrelay.logs.purge`,
  /** Removes every artifact of one job (bytes and index entries), answered by one gateway replica. */
  artifactsPurge: () => `${ROOT}.gateway.artifacts.purge`,
  /** Billing RPCs, answered by one billing replica. */
  billingPlansList: () => `${ROOT}.billing.plans.list`,
  billingSubscriptionGet: () => `${ROOT}.billing.subscription.get`,
  billingSubscriptionCancel: () => `${ROOT}.billing.subscription.cancel`,
  /** A business's log quota, from its plan (the log relay's per-business cap). */
  billingLogQuota: () => `${ROOT}.billing.logs.quota`,
  /** A business's artifact storage budget, from its plan (the gateway's check before an upload). */
  billingArtifactQuota: () => `${ROOT}.billing.artifacts.quota`,
  /** The retention of many businesses' plans at once (the scheduler's retention sweep). */
  billingRetentionLookup: () => `${ROOT}.billing.retention.lookup`,
  billingCheckoutCreate: () => `${ROOT}.billing.checkout.create`,
  billingWebhookReceive: () => `${ROOT}.billing.webhooks.receive`,
  /** The sandbox payment provider's checkout page: read a session, pay or cancel it. */
  billingSandboxSessionGet: () => `${ROOT}.billing.sandbox.session.get`,
  billingSandboxSessionAct: () => `${ROOT}.billing.sandbox.session.act`,
  /** Stored log lines of one attempt. */
  jobLogs: (jobId: string, attempt: number) => `${ROOT}.logs.${checkId("job", jobId)}.${checkedAttempt(attempt)}`,
  jobLogsAll: () => `${ROOT}.logs.>`,
  /** Stored log lines of every attempt of one job. */
  jobLogsOfJob: (jobId: string) => `${ROOT}.logs.${checkId("job", jobId)}.*`,
  /** Lines of a job dropped past the log cap, per attempt (kept in the log stream, so they expire with the lines). */
  jobLogDrops: (jobId: string) => `${ROOT}.logdrops.${checkId("job", jobId)}`,
  jobLogDropsAll: () => `${ROOT}.logdrops.>`,
  /** Log bytes stored from one node in one UTC hour (`YYYYMMDDHH`), a counter. */
  logUsageOfNode: (nodeId: string, hour: string) =>
    `${ROOT}.logusage.node.${checkId("node", nodeId)}.${checkedWindow(hour, 10)}`,
  /** Log bytes stored for one business's jobs in one UTC day (`YYYYMMDD`), a counter. */
  logUsageOfBusiness: (appId: string, businessId: string, day: string) =>
    `${ROOT}.logusage.business.${checkId("app", appId)}.${checkId("business", businessId)}.${checkedWindow(day, 8)}`,
  logUsageAll: () => `${ROOT}.logusage.>`,
  /** Bytes of artifacts one business keeps stored, a counter: up by each upload, down by each removal. */
  artifactUsageOfBusiness: (appId: string, businessId: string) =>
    `${ROOT}.artifactusage.${checkId("app", appId)}.${checkId("business", businessId)}`,
  artifactUsageAll: () => `${ROOT}.artifactusage.>`,
  /** Core NATS events: a node got an assignment, or lost one it did not end itself (each wakes its long poll); a job ended. */
  nodeAssigned: (nodeId: string) => `${ROOT}.events.node.${checkId("node", nodeId)}.assigned`,
  nodeReleased: (nodeId: string) => `${ROOT}.events.node.${checkId("node", nodeId)}.released`,
  /** A node was set draining: its long poll ends. */
  nodeDraining: (nodeId: string) => `${ROOT}.events.node.${checkId("node", nodeId)}.draining`,
  /** Every event of one node, what a long poll listens to. */
  nodeEvents: (nodeId: string) => `${ROOT}.events.node.${checkId("node", nodeId)}.*`,
  jobTransitioned: (jobId: string) => `${ROOT}.events.job.${checkId("job", jobId)}.transitioned`,
  jobTransitionedAll: () => `${ROOT}.events.job.*.transitioned`,
  /** NATS-direct node plane (`NODE_NATS_OPERATIONS`): an agent's requests, answered by one gateway replica. */
  nodePlane: (operation: string) => `${ROOT}.nodeplane.${checkedToken(operation)}`,
  /** Opens an artifact upload over NATS, answered by one gateway replica. */
  nodePlaneUploadOpen: () => `${ROOT}.nodeplane.artifact.open`,
  /** One open upload on the gateway replica `instanceId`: `.chunk`, `.commit` and `.abort` under it. */
  nodePlaneUpload: (instanceId: string, uploadId: string) =>
    `${ROOT}.nodeplane.artifact.${checkedToken(instanceId)}.${checkedToken(uploadId)}`,
  /** Everything an agent may publish in NATS-direct mode (its NATS user's publish permission). */
  nodePlaneAll: () => `${ROOT}.nodeplane.>`,
  /** Billing RPCs, answered by one billing replica: the submit's credit check, the ledger list. */
  creditCheck: () => `${ROOT}.billing.credit.check`,
  creditLedgerList: () => `${ROOT}.billing.ledger.list`,
  /** What each API key of a business was charged this month (the gateway's key list). */
  creditKeySpend: () => `${ROOT}.billing.credit.key-spend`,
  /** The metering message of one job's attempt ends (`cjs.metering.>` for all). */
  metering: (jobId: string) => `${ROOT}.metering.${checkId("job", jobId)}`,
  meteringAll: () => `${ROOT}.metering.>`,
  /** Webhook RPCs, answered by one webhooks replica. */
  webhookCreate: () => `${ROOT}.webhooks.create`,
  webhookList: () => `${ROOT}.webhooks.list`,
  webhookDelete: () => `${ROOT}.webhooks.delete`,
  webhookTest: () => `${ROOT}.webhooks.test`,
  webhookDeliveriesList: () => `${ROOT}.webhooks.deliveries`,
  webhookDeliveryRetry: () => `${ROOT}.webhooks.deliveries.retry`,
  /** A delivery due (the work queue's subjects: `cjs.webhook-deliveries.>` for all). */
  webhookDelivery: (webhookId: string) => `${ROOT}.webhook-deliveries.${checkId("webhook", webhookId)}`,
  webhookDeliveriesAll: () => `${ROOT}.webhook-deliveries.>`,
  /** Health ping of a service, answered by every replica. */
  servicePing: (service: string) => `${ROOT}.ping.${checkedToken(service)}`,
} as const;

/** Queue groups: one replica of a service takes each message. */
export const queueGroups = {
  gateway: "cjs-gateway",
  scheduler: "cjs-scheduler",
  nodeRegistry: "cjs-node-registry",
  logRelay: "cjs-log-relay",
  billing: "cjs-billing",
  webhooks: "cjs-webhooks",
} as const;

/** One level of a KV key: an id of one of these kinds (checked by its format), or a `part` as `kvKey` makes it. */
type KeyLevel = IdKind | readonly IdKind[] | "part";

/**
 * The levels of each bucket's keys, in order; `"..."` last admits any further `part`
 * levels. `JsonBucket` refuses a key of another shape before it reaches NATS
 * (`checkKvKey`), whoever built it.
 */
export const BUCKET_KEYS = {
  [BUCKETS.apps]: ["app"],
  [BUCKETS.businesses]: ["business"],
  [BUCKETS.users]: ["user"],
  [BUCKETS.businessUsers]: ["app", "business", "user"],
  [BUCKETS.userEmails]: ["app", "part"],
  [BUCKETS.apiKeys]: ["key"],
  [BUCKETS.apiKeyOwners]: [["user", "node"], "key"],
  [BUCKETS.sessions]: ["session"],
  [BUCKETS.otpCodes]: ["app", "part", "..."],
  [BUCKETS.loginGuards]: ["part", "part", "..."],
  [BUCKETS.signingKeys]: ["part"],
  [BUCKETS.jobs]: ["part", "app", "business", "job"],
  [BUCKETS.nodes]: ["node"],
  [BUCKETS.allocations]: ["node"],
  [BUCKETS.artifactIndex]: ["app", "business", "job", "part"],
  [BUCKETS.keyQuotas]: ["key"],
  [BUCKETS.leases]: ["part", "..."],
  [BUCKETS.subscriptions]: ["app", "business"],
  [BUCKETS.webhookEvents]: ["part", "part"],
  [BUCKETS.checkoutSessions]: ["part"],
  [BUCKETS.billingSecrets]: ["part"],
  [BUCKETS.rateLimits]: ["app", "user"],
  [BUCKETS.creditAccounts]: ["app", "business"],
  [BUCKETS.creditEntries]: ["app", "business", "part", "part", "..."],
  [BUCKETS.idempotency]: ["app", "business", "part"],
  [BUCKETS.webhooks]: ["app", "business", "webhook"],
  [BUCKETS.webhookDeliveries]: ["app", "business", "webhook", "part"],
  [BUCKETS.webhookKeys]: ["part"],
  [BUCKETS.schedules]: ["app", "business", "schedule"],
} as const satisfies Record<BucketName, readonly (KeyLevel | "...")[]>;

/** What `kvKey` writes for one part: KV key characters without a dot or a wildcard. */
const KEY_PART = /^[-/_=A-Za-z0-9]+$/;

function levelFits(level: string, expected: KeyLevel): boolean {
  if (expected === "part") return KEY_PART.test(level);
  return (typeof expected === "string" ? [expected] : expected).some((kind) => isId(kind, level));
}

function levelError(expected: KeyLevel | undefined): MalformedIdError {
  return new MalformedIdError(
    expected === undefined || expected === "part" ? undefined : typeof expected === "string" ? expected : expected[0],
  );
}

/**
 * Returns `key` when it has the shape of its bucket's keys (`BUCKET_KEYS`): every level
 * an id of its kind or a plain part. Throws `MalformedIdError` (400 `request.invalid`)
 * otherwise. A bucket not listed takes plain parts only.
 */
export function checkKvKey(bucket: string, key: string): string {
  const shape: readonly (KeyLevel | "...")[] = (BUCKET_KEYS as Record<string, readonly (KeyLevel | "...")[]>)[
    bucket
  ] ?? ["part", "..."];
  const open = shape[shape.length - 1] === "...";
  const fixed = (open ? shape.slice(0, -1) : shape) as readonly KeyLevel[];
  const levels = key.split(".");
  if (levels.length < fixed.length || (!open && levels.length > fixed.length)) throw levelError(fixed[levels.length]);
  levels.forEach((level, index) => {
    const expected = fixed[index] ?? "part";
    if (!levelFits(level, expected)) throw levelError(expected);
  });
  return key;
}

/** A part kept as it is: KV key characters, no dot (it would add a level), no leading `=` (the encoded marker). */
const KEY_SAFE_PART = /^[-/_a-zA-Z0-9][-/_=a-zA-Z0-9]*$/;

/**
 * Builds a KV key from parts. Parts that are not already key-safe (an e-mail, an IP
 * address) are base64url-encoded, so no input can forge a key of another shape.
 */
export function kvKey(...parts: string[]): string {
  return parts
    .map((part) => (KEY_SAFE_PART.test(part) ? part : `=${Buffer.from(part, "utf8").toString("base64url")}`))
    .join(".");
}
