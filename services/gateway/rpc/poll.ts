import {
  type Assignment,
  type DeliveredAttempt,
  NodeAssignedEvent,
  type NodeContext,
  PollReply,
  type PollResponse,
  type RPC_ROUTES,
  type RunningAttempt,
} from "../../../shared/contract/index.js";
import { decodeJson, requestRpc, subjects } from "../../../shared/nats/index.js";
import type { RequestTrace } from "../../../shared/tracing/index.js";
import { signArtifactUrl } from "../artifacts/artifact-urls.js";
import type { GatewayContext } from "../gateway-context.js";
import type { RpcHandler } from "../http/register-rpc.js";
import { nodeContext } from "./forward.js";
import { askJobOwner } from "./ask-job-owner.js";
import { type NodeEvent, type NodeEventWaiter, NodeEvents, nameOf } from "./node-events.js";

/**
 * An attempt with the URL its artifacts go to: signed for every name of the job, in the
 * job's tenancy (not the node's: an operator pool serves many), until the job's timeout
 * plus the URL lifetime from now.
 */
export function withUploadUrl(
  gw: GatewayContext,
  origin: string,
  { app_id, business_id, ...assignment }: DeliveredAttempt,
): Assignment {
  return {
    ...assignment,
    artifact_upload_url: signArtifactUrl(gw.urls, origin, {
      kind: "upload",
      job_id: assignment.job_id,
      artifact_id: null,
      grant: { app_id, business_id, attempt: assignment.attempt, content_type: null },
      expiresAtMs: gw.clock.now() + (assignment.timeout_seconds + gw.config.CJS_ARTIFACT_URL_TTL_SECONDS) * 1000,
    }),
  };
}

function withUploadUrls(gw: GatewayContext, origin: string, reply: PollReply): PollResponse {
  return {
    ...(reply.held ? { held: reply.held } : {}),
    jobs: reply.jobs.map((attempt) => withUploadUrl(gw, origin, attempt)),
  };
}

/**
 * `POST /api/compute/nodes/poll`: asks the scheduler; with a `wait_seconds` and nothing
 * new for the node, waits for one of the node's events (an assignment, or an attempt the
 * service freed) and asks again, so a new job reaches the node at once without the node
 * polling in a loop, however many jobs it runs already. A poll that names what it `known`s
 * is answered when the scheduler's answer holds something else: a new attempt, or a known
 * one that is no longer the node's. One without (an earlier agent) is answered at once
 * while the node holds any attempt, as that agent expects.
 *
 * A busy node polls again as soon as an answer brings it work. When it knows exactly what
 * this gateway's last answer told it and no event of the node came since that answer was
 * asked, the scheduler would say the same: the poll waits for the next event without
 * asking first (at a steady rate, one ask per job instead of two). A wait that ends with
 * no event asks then, so an event lost on the way costs at most the wait. When `stopping`
 * aborts (the gateway is shutting down), a wait in progress ends at once with the empty
 * answer, so the node asks again, through another replica, instead of holding the stop up.
 */
export function pollNode(gw: GatewayContext, stopping?: AbortSignal): RpcHandler<typeof RPC_ROUTES.poll> {
  const nodeEvents = new NodeEvents(gw.nc);
  stopping?.addEventListener("abort", () => nodeEvents.close(), { once: true });
  void forgetAnswersOnReconnect(gw, nodeEvents);
  return async (body, { caller, origin, trace }) => {
    const node = nodeContext(caller);
    const ask = async (): Promise<PollResponse> =>
      withUploadUrls(gw, origin, await requestRpc(gw.nc, "nodePoll", { caller: node, body }, { trace }));
    if (body.wait_seconds === 0) return ask();
    // Listen before the first ask: an event between the two is not missed.
    const events = nodeEvents.listen(node.node_id);
    const askAndKeep = async (): Promise<PollResponse> => {
      const heardBefore = events.heard();
      const answer = await ask();
      events.rememberAnswer(heardBefore, answer);
      return answer;
    };
    const endWait = () => events.close();
    const timer = setTimeout(endWait, body.wait_seconds * 1000);
    stopping?.addEventListener("abort", endWait, { once: true });
    if (stopping?.aborted) endWait();
    try {
      const { known } = body;
      // Undefined: not asked, since the node was told all the scheduler would say.
      let answer = known && events.answered(known) ? undefined : await askAndKeep();
      const draining = subjects.nodeDraining(node.node_id);
      while (answer === undefined || !isNews(known, answer)) {
        // Every event that came meanwhile at once: the next ask covers them all.
        const came = await events.next();
        if (came === null) {
          if (answer !== undefined) return answer;
          // Not asked yet: a stopping gateway repeats what the node knows; a wait that ended asks once.
          return stopping?.aborted ? { jobs: [], held: known ?? [] } : await askAndKeep();
        }
        answer = (known && givenByEvents(gw, node, origin, trace, events, known, came)) || (await askAndKeep());
        // A draining node's agent waits for this poll before it stops: it ends now, with whatever the node holds.
        if (came.some((event) => event.subject === draining)) return answer;
      }
      return answer;
    } finally {
      clearTimeout(timer);
      stopping?.removeEventListener("abort", endWait);
      events.close();
    }
  };
}

/**
 * The answer the scheduler would give, taken from the events themselves (decision 0096):
 * when every event since an answer the node knows is an assignment carrying its attempt,
 * the node is given those attempts, and the scheduler is told (`nodeDelivered`, not
 * awaited: its start is held from then, as a poll's). Undefined when the gateway must ask.
 *
 * The answer leaves `held` out: no attempt of the node was freed since (that is an event
 * too), but one the node finished may have been, and only the scheduler knows which. A
 * `held` that repeated `known` would keep every finished attempt known to the agent.
 */
function givenByEvents(
  gw: GatewayContext,
  node: NodeContext,
  origin: string,
  trace: RequestTrace | undefined,
  events: NodeEventWaiter,
  known: readonly RunningAttempt[],
  came: readonly NodeEvent[],
): PollResponse | undefined {
  const carried: DeliveredAttempt[] = [];
  for (const { subject, data } of came) {
    if (subject !== subjects.nodeAssigned(node.node_id)) return undefined;
    const event = NodeAssignedEvent.safeParse(decodeJson(data));
    if (!event.success || event.data.delivered === undefined) return undefined;
    carried.push(event.data.delivered);
  }
  if (!events.answeredBefore(known, came)) return undefined;
  const knownNames = new Set(known.map(nameOf));
  const jobs = carried.filter((attempt) => !knownNames.has(nameOf(attempt)));
  // Nothing new after all (an event that came late): the scheduler says what is held.
  if (jobs.length === 0) return undefined;
  // Kept as told: the node's next poll, naming what it runs, needs no ask.
  events.rememberAnswer(events.heard(), { jobs, held: [...known, ...jobs] });
  for (const { job_id, attempt } of jobs)
    void askJobOwner(gw.nc, "nodeDelivered", { caller: node, body: { job_id, attempt } }, trace).catch(
      (error: unknown) =>
        gw.logger.warn(
          { err: error, node_id: node.node_id, job_id, attempt },
          "the scheduler was not told of an attempt given from its event; the attempt's result will write its start",
        ),
    );
  return withUploadUrls(gw, origin, { jobs });
}

/** Events published while the connection to NATS was down never arrive: no kept answer is trusted after that. */
async function forgetAnswersOnReconnect(gw: GatewayContext, nodeEvents: NodeEvents): Promise<void> {
  for await (const status of gw.nc.status())
    if (status.type === "disconnect" || status.type === "reconnect") nodeEvents.forgetAnswers();
}

/** Whether an answer tells the node something: a new attempt, or (when it named what it knows) a known one gone. */
function isNews(known: readonly RunningAttempt[] | undefined, answer: PollResponse): boolean {
  if (answer.jobs.length > 0) return true;
  if (!known) return false;
  const held = new Set((answer.held ?? []).map(({ job_id, attempt }) => `${job_id}#${attempt}`));
  return known.some(({ job_id, attempt }) => !held.has(`${job_id}#${attempt}`));
}
