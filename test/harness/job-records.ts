import { type JobRecord, type NodeRecord, operatorPoolKey, selfHostedPoolKey } from "../../shared/records/index.js";

const AT = "2026-03-01T00:00:00.000Z";

/**
 * A job record as submit writes it: queued, attempt 0, one `submitted` event, on the
 * operator pool `default`. Tests state only what they are about in `overrides`.
 */
export function queuedJobRecord(overrides: Partial<JobRecord> = {}): JobRecord {
  const at = overrides.created_at ?? AT;
  return {
    job_id: "job_0000000000000000000A",
    app_id: "app1",
    business_id: "biz_CCCCCCCCCCCCCCCCCCCC",
    user_id: "usr_DDDDDDDDDDDDDDDDDDDD",
    key_id: null,
    name: null,
    type: "shell",
    command: ["true"],
    env: {},
    resources: { cpu: 1, memory_mb: 512, gpu: 0 },
    timeout_seconds: 60,
    pool_id: "default",
    pool_key: operatorPoolKey(overrides.app_id ?? "app1", "default", []),
    labels: {},
    priority: 0,
    metadata: {},
    retry: null,
    retry_count: 0,
    queue_timeout_seconds: null,
    run_at: null,
    next_attempt_at: null,
    depends_on: [],
    dependents: [],
    concurrency: null,
    schedule_id: null,
    waiting_on: [],
    max_attempts: 3,
    state: "queued",
    attempt: 0,
    node_id: null,
    exit_code: null,
    error: null,
    usage: null,
    pending_reason: "waiting_for_scheduler",
    created_at: at,
    queued_at: at,
    started_at: null,
    finished_at: null,
    updated_at: at,
    deadline_at: null,
    attempt_base: 0,
    timeline: [{ at, state: "queued", attempt: 0, reason: "submitted", node_id: null }],
    ...overrides,
  };
}

/**
 * A node record as registration writes it: online, not draining, running `shell`, with 2
 * slots, in the self-hosted pool `default` of its business. Tests state only what they are
 * about in `overrides` (a pool given by `pool_id` also needs its `pool_key`).
 */
export function nodeRecord(overrides: Partial<NodeRecord> & Pick<NodeRecord, "node_id">): NodeRecord {
  const at = overrides.created_at ?? AT;
  const business_id = overrides.business_id ?? "biz_CCCCCCCCCCCCCCCCCCCC";
  return {
    app_id: "app1",
    business_id,
    user_id: "usr_CCCCCCCCCCCCCCCCCCCC",
    name: overrides.node_id,
    hostname: `${overrides.node_id}.local`,
    pool_id: "default",
    pool_key: selfHostedPoolKey(business_id, "default"),
    labels: {},
    capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 2 },
    job_types: ["shell"],
    quotas: null,
    agent_version: "test",
    draining: false,
    offline_at: null,
    last_heartbeat_at: at,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}
