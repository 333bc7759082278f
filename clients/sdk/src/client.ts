import { httpAnswerFacts, readEnvelope } from "../../../shared/client/index.js";
import { IDEMPOTENCY_KEY_HEADER, isTerminal, type JobState } from "../../../shared/contract/index.js";
import { getArtifact, putArtifact, readAll, type ArtifactBody, type ArtifactDownload } from "./artifacts.js";
import type { Credentials, SessionCredentials } from "./credentials.js";
import { EXPORT_ROUTES, openExport, type ExportRequest } from "./exports.js";
import { newIdempotencyKey } from "./idempotency-key.js";
import { followLogs, type FollowLogsOptions, type LogStreamItem } from "./logs.js";
import { pause } from "./retry-policy.js";
import {
  isIdempotent,
  RPC_ROUTES,
  takesIdempotencyKey,
  type DryRunResponse,
  type RpcName,
  type RpcRequest,
  type RpcResponse,
} from "./routes.js";
import { Transport, type TransportOptions } from "./transport.js";

export type ClientOptions = TransportOptions;

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /**
   * The `Idempotency-Key` of a submit or retry (1 to 255 printable ASCII characters): a
   * repeat of the call with the same key, within 24 h, answers as the first did. Default:
   * a random UUID per call, sent again on each of the call's own retries. Other operations
   * ignore it.
   */
  idempotencyKey?: string | undefined;
}

export interface WaitOptions extends CallOptions {
  /** The first pause between looks at the job; it grows to `maxPollIntervalMs`. Default 250 ms. */
  pollIntervalMs?: number;
  /** Default 2000 ms. */
  maxPollIntervalMs?: number;
}

type Job = RpcResponse<"retrieveJob">;

/** Submit answers the queued job, or with `wait: true` the terminal one with its artifacts, as retrieve answers them. */
export interface SubmitJob {
  (request: RpcRequest<"submitJob">, options: WaitOptions & { wait: true }): Promise<Job>;
  (request: RpcRequest<"submitJob">, options?: WaitOptions & { wait?: false }): Promise<RpcResponse<"submitJob">>;
}
type Page<N extends RpcName> =
  RpcResponse<N> extends { items: Array<infer Item>; next_cursor: string | null } ? Item : never;

/**
 * A client of the compute job service's HTTP API. Every operation of the API is `call`,
 * typed from the same contract the gateway validates with; the namespaces below add what
 * a bare call does not: waiting for a job's end, following its log, paging, artifacts.
 */
export class ComputeJobsClient {
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options, async (refreshToken) =>
      this.call("refresh", { refresh_token: refreshToken }),
    );
  }

  /**
   * Signs in with e-mail and password and answers a client on that session, refreshed as
   * needed; `onTokens` hears the first pair and every new one (see `SessionCredentials`).
   */
  static async signIn(
    options: Omit<ClientOptions, "credentials"> &
      Pick<SessionCredentials, "onTokens" | "loadTokens"> & { email: string; password: string },
  ): Promise<ComputeJobsClient> {
    const { email, password, onTokens, loadTokens, ...rest } = options;
    const client = new ComputeJobsClient(rest);
    const tokens = await client.call("login", { email, password });
    await onTokens?.(tokens);
    client.useCredentials({
      tokens,
      ...(onTokens !== undefined ? { onTokens } : {}),
      ...(loadTokens !== undefined ? { loadTokens } : {}),
    });
    return client;
  }

  /** Changes the credential of every later call. */
  useCredentials(credentials: Credentials | undefined): void {
    this.transport.credentials.set(credentials);
  }

  /** One operation of the API by its contract name; answers the envelope's payload or throws an ApiError. */
  async call<N extends RpcName>(name: N, body: RpcRequest<N>, options: CallOptions = {}): Promise<RpcResponse<N>> {
    const route = RPC_ROUTES[name];
    const headers: Record<string, string> = takesIdempotencyKey(name)
      ? { [IDEMPOTENCY_KEY_HEADER.toLowerCase()]: options.idempotencyKey ?? newIdempotencyKey() }
      : {};
    const response = await this.transport.request(route.method, route.path, JSON.stringify(body ?? {}), {
      idempotent: isIdempotent(name),
      signal: options.signal,
      headers,
      // Sign-in, refresh and logout carry no credential: a refresh must not wait on the refresh it is.
      identify: route.auth === "public" ? "app" : "credential",
    });
    return readEnvelope(await response.json(), httpAnswerFacts(response)) as RpcResponse<N>;
  }

  /** Every item of a paginated operation (jobs, ledger entries), page after page, as they are read. */
  async *paginate<N extends RpcName>(name: N, body: RpcRequest<N>, options: CallOptions = {}): AsyncGenerator<Page<N>> {
    let cursor: string | undefined;
    do {
      const page = (await this.call(
        name,
        { ...(body as object), ...(cursor !== undefined ? { cursor } : {}) } as RpcRequest<N>,
        options,
      )) as unknown as { items: Array<Page<N>>; next_cursor: string | null };
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  readonly jobs = {
    /** Queues a job; with `wait: true`, answers `{ job, artifacts }` (as retrieve) once it is terminal. */
    submit: (async (request: RpcRequest<"submitJob">, options: WaitOptions & { wait?: boolean } = {}) => {
      const queued = await this.call("submitJob", request, options);
      return options.wait ? this.jobs.wait(queued.job_id, options) : queued;
    }) as SubmitJob,
    /** What a submit of this body would do now (nodes that fit, cost, credit, quota and rate-limit room), creating nothing. */
    dryRun: async (request: Omit<RpcRequest<"submitJob">, "dry_run">, options?: CallOptions): Promise<DryRunResponse> =>
      (await this.call("submitJob", { ...request, dry_run: true }, options)) as unknown as DryRunResponse,
    retrieve: (jobId: string, options?: CallOptions) => this.call("retrieveJob", { job_id: jobId }, options),
    list: (filter: RpcRequest<"listJobs"> = {}, options?: CallOptions) => this.call("listJobs", filter, options),
    /** Every job the filter matches, newest first, across pages. */
    all: (filter: Omit<RpcRequest<"listJobs">, "cursor"> = {}, options?: CallOptions) =>
      this.paginate("listJobs", filter, options),
    cancel: (jobId: string, options?: CallOptions) => this.call("cancelJob", { job_id: jobId }, options),
    retry: (jobId: string, options?: CallOptions) => this.call("retryJob", { job_id: jobId }, options),
    /** Deletes a finished job with its logs and artifacts. */
    delete: (jobId: string, options?: CallOptions) => this.call("deleteJob", { job_id: jobId }, options),
    /** The business's jobs as a streamed CSV or NDJSON file (business admins), with `list`'s filters. */
    export: (request: ExportRequest<"exportJobs">, options?: CallOptions) =>
      openExport(this.transport, EXPORT_ROUTES.exportJobs.path, request, options),
    /** Answers `{ job, artifacts }` (as retrieve) once the job is terminal (succeeded, failed, timed_out or cancelled). */
    wait: async (jobId: string, options: WaitOptions = {}): Promise<Job> => {
      let interval = options.pollIntervalMs ?? 250;
      for (;;) {
        const job = await this.jobs.retrieve(jobId, options);
        if (isTerminal(job.job.state as JobState)) return job;
        await pause(interval, options.signal);
        interval = Math.min(options.maxPollIntervalMs ?? 2000, interval * 2);
      }
    },
    /** The job's log lines as they are stored, then its end; resumes by itself after a dropped connection. */
    logs: (jobId: string, options?: FollowLogsOptions): AsyncGenerator<LogStreamItem> =>
      followLogs(this.transport, jobId, options),
  };

  readonly artifacts = {
    list: (jobId: string, options?: CallOptions) => this.call("listArtifacts", { job_id: jobId }, options),
    delete: (jobId: string, artifactId: string, options?: CallOptions) =>
      this.call("deleteArtifact", { job_id: jobId, artifact_id: artifactId }, options),
    /** Uploads one artifact of a job (needs a signed-in session: presign-upload takes no API key). */
    upload: async (jobId: string, artifactId: string, body: ArtifactBody, options: { contentType?: string } = {}) => {
      const target = await this.call("presignUpload", {
        job_id: jobId,
        artifact_id: artifactId,
        ...(options.contentType ? { content_type: options.contentType } : {}),
      });
      return putArtifact(this.transport, target.url, body, options.contentType);
    },
    /** Opens one artifact of a job as a stream checked against its SHA-256 (a session, or an API key with `jobs:read`). */
    download: (jobId: string, artifactId: string, options: CallOptions = {}): Promise<ArtifactDownload> =>
      getArtifact(this.transport, jobId, artifactId, options.signal),
    /** The whole artifact in memory, checked. */
    bytes: async (jobId: string, artifactId: string, options: CallOptions = {}): Promise<Uint8Array> =>
      readAll(await this.artifacts.download(jobId, artifactId, options)),
  };

  readonly keys = {
    create: (request: RpcRequest<"createApiKey">, options?: CallOptions) => this.call("createApiKey", request, options),
    list: (options?: CallOptions) => this.call("listApiKeys", {}, options),
    revoke: (keyId: string, options?: CallOptions) => this.call("revokeApiKey", { key_id: keyId }, options),
    /** Renames a key or changes its monthly budget (null removes it). */
    update: (request: RpcRequest<"updateApiKey">, options?: CallOptions) => this.call("updateApiKey", request, options),
  };

  readonly nodes = {
    list: (request: RpcRequest<"listNodes"> = {}, options?: CallOptions) => this.call("listNodes", request, options),
    drain: (request: RpcRequest<"drainNode">, options?: CallOptions) => this.call("drainNode", request, options),
    rotateKey: (request: RpcRequest<"rotateNodeKey">, options?: CallOptions) =>
      this.call("rotateNodeKey", request, options),
    /** Deletes an offline node; its keys stop working. */
    delete: (nodeId: string, options?: CallOptions) => this.call("deleteNode", { node_id: nodeId }, options),
  };

  readonly billing = {
    plans: (options?: CallOptions) => this.call("listPlans", {}, options),
    subscription: (options?: CallOptions) => this.call("getSubscription", {}, options),
    /** Cancels the subscription at the end of its period (business admins). */
    cancelSubscription: (options?: CallOptions) => this.call("cancelSubscription", {}, options),
    checkout: (request: RpcRequest<"createCheckout">, options?: CallOptions) =>
      this.call("createCheckout", request, options),
    ledger: (request: RpcRequest<"listLedger"> = {}, options?: CallOptions) =>
      this.call("listLedger", request, options),
    /** Every ledger entry, newest first, across pages. */
    allLedgerEntries: (options?: CallOptions) => this.paginate("listLedger", {}, options),
    /** The ledger as a streamed CSV or NDJSON file (business admins). */
    exportLedger: (request: ExportRequest<"exportLedger">, options?: CallOptions) =>
      openExport(this.transport, EXPORT_ROUTES.exportLedger.path, request, options),
  };

  /** The signed-in user's own account. */
  readonly account = {
    /** Needs the current password; ends the user's other sessions. */
    changePassword: (request: RpcRequest<"changePassword">, options?: CallOptions) =>
      this.call("changePassword", request, options),
    /** E-mails a reset code (the same answer whether or not the address has an account). */
    requestPasswordReset: (email: string, options?: CallOptions) =>
      this.call("requestPasswordReset", { email }, options),
    /** Sets a new password with the e-mailed code; ends every session of the user. */
    confirmPasswordReset: (request: RpcRequest<"confirmPasswordReset">, options?: CallOptions) =>
      this.call("confirmPasswordReset", request, options),
  };

  /** The business's webhooks (docs/webhooks.md); a create's answer holds the signing secret, shown that once. */
  readonly webhooks = {
    create: (request: RpcRequest<"createWebhook">, options?: CallOptions) =>
      this.call("createWebhook", request, options),
    list: (request: RpcRequest<"listWebhooks"> = {}, options?: CallOptions) =>
      this.call("listWebhooks", request, options),
    delete: (webhookId: string, options?: CallOptions) =>
      this.call("deleteWebhook", { webhook_id: webhookId }, options),
    /** Queues a `webhook.test` event through the normal delivery path; answers its delivery id. */
    test: (webhookId: string, options?: CallOptions) => this.call("testWebhook", { webhook_id: webhookId }, options),
    /** One page of the webhook's deliveries of the last 7 days, newest first, each with its tries. */
    deliveries: (request: RpcRequest<"listWebhookDeliveries">, options?: CallOptions) =>
      this.call("listWebhookDeliveries", request, options),
    /** Sends a delivery that has ended (succeeded or failed) again now; one still being tried is 409. */
    retryDelivery: (webhookId: string, deliveryId: string, options?: CallOptions) =>
      this.call("retryWebhookDelivery", { webhook_id: webhookId, delivery_id: deliveryId }, options),
  };

  /** The users of the caller's business (business admins). */
  readonly users = {
    list: (request: RpcRequest<"listUsers"> = {}, options?: CallOptions) => this.call("listUsers", request, options),
    /** Every user of the business, across pages. */
    all: (options?: CallOptions) => this.paginate("listUsers", {}, options),
    invite: (request: RpcRequest<"inviteUser">, options?: CallOptions) => this.call("inviteUser", request, options),
    disable: (userId: string, options?: CallOptions) => this.call("disableUser", { user_id: userId }, options),
    enable: (userId: string, options?: CallOptions) => this.call("enableUser", { user_id: userId }, options),
    setRole: (userId: string, role: RpcRequest<"setUserRole">["role"], options?: CallOptions) =>
      this.call("setUserRole", { user_id: userId, role }, options),
  };

  /** Jobs made on the ticks of a cron expression. */
  readonly schedules = {
    create: (request: RpcRequest<"createSchedule">, options?: CallOptions) =>
      this.call("createSchedule", request, options),
    list: (request: RpcRequest<"listSchedules"> = {}, options?: CallOptions) =>
      this.call("listSchedules", request, options),
    /** Every schedule of the business, newest first, across pages. */
    all: (options?: CallOptions) => this.paginate("listSchedules", {}, options),
    retrieve: (scheduleId: string, options?: CallOptions) =>
      this.call("retrieveSchedule", { schedule_id: scheduleId }, options),
    pause: (scheduleId: string, options?: CallOptions) =>
      this.call("pauseSchedule", { schedule_id: scheduleId }, options),
    resume: (scheduleId: string, options?: CallOptions) =>
      this.call("resumeSchedule", { schedule_id: scheduleId }, options),
    /** Deletes the schedule; the jobs it made are kept. */
    delete: (scheduleId: string, options?: CallOptions) =>
      this.call("deleteSchedule", { schedule_id: scheduleId }, options),
  };
}
