import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { subjects } from "../../../shared/nats/index.js";

/** How long a node's subscription outlives its last waiting poll: its next poll, a moment later, finds it open. */
const LINGER_MS = 30_000;

/** An attempt as a poll names it: `<job id>#<attempt>`. */
type AttemptName = string;

/** One of a node's events as a waiting poll hears it. */
export interface NodeEvent {
  subject: string;
  data: Uint8Array;
  /** Its place among the events this gateway heard on the node's subscription (`heard` just after it came). */
  seq: number;
}

/** One waiting poll's view of its node's events: whether one came since it began or last looked, and which. */
export interface NodeEventWaiter {
  /** Resolves with the events that came since the last call (at least one), or null once closed. */
  next(): Promise<NodeEvent[] | null>;
  close(): void;
  /** How many of the node's events this gateway has heard on the current subscription: take it just before asking the scheduler. */
  heard(): number;
  /** Keeps the scheduler's answer for the node, asked when `heard` was `heardBefore`, for `answered`. */
  rememberAnswer(heardBefore: number, answer: NodeAnswer): void;
  /**
   * Whether the scheduler would tell a node that knows `known` nothing new: the answer kept
   * was asked after every event of the node this subscription heard, the node knows every
   * attempt it delivered (so it arrived), and nothing else it was not told. Every change of
   * what a node is given (an assignment, an attempt the service freed, draining) is
   * published as one of its events after it is written, so without one an ask would find
   * the same. An event lost on the way delays the node until its poll's wait ends.
   */
  answered(known: readonly { job_id: string; attempt: number }[]): boolean;
  /**
   * Whether `answered(known)` held just before `came` (what `next` gave last) and nothing
   * came after them: the scheduler would then tell the node what those events say and
   * nothing more.
   */
  answeredBefore(known: readonly { job_id: string; attempt: number }[], came: readonly NodeEvent[]): boolean;
}

/** What an answer of the scheduler gave the node: attempts to start, and those it still holds. */
export interface NodeAnswer {
  jobs: readonly { job_id: string; attempt: number }[];
  held?: readonly { job_id: string; attempt: number }[] | undefined;
}

interface KeptAnswer {
  heardBefore: number;
  delivered: ReadonlySet<AttemptName>;
  told: ReadonlySet<AttemptName>;
}

interface NodeFeed {
  subscription: Subscription;
  waiters: Set<Waiting>;
  idle: NodeJS.Timeout | undefined;
  /** The node's events heard on this subscription. */
  heard: number;
  /** The last answer of the scheduler for the node while the subscription was open. */
  answer: KeptAnswer | undefined;
}

/** An attempt's name, as the gateway keeps what it told a node. */
export const nameOf = ({ job_id, attempt }: { job_id: string; attempt: number }): AttemptName => `${job_id}#${attempt}`;

/** The node knows every attempt the kept answer delivered (so it arrived), and nothing else it was not told. */
function told(answer: KeptAnswer, known: readonly { job_id: string; attempt: number }[]): boolean {
  const names = new Set(known.map(nameOf));
  return [...answer.delivered].every((name) => names.has(name)) && [...names].every((name) => answer.told.has(name));
}

interface Waiting {
  events: NodeEvent[];
  wake: (() => void) | undefined;
  closed: boolean;
}

/**
 * Each node's events (`cjs.events.node.<id>.*`) for the long polls this gateway holds: one
 * subscription per node shared by its polls and kept open a while after the last one
 * ends. A busy node's agent polls again as soon as an answer brings it work, so one
 * subscription and one unsubscription per poll (each a protocol message, and on the
 * server a pass over the subject cache) were a cost per job; now it is one per node.
 */
export class NodeEvents {
  readonly #feeds = new Map<string, NodeFeed>();

  constructor(
    private readonly nc: Pick<NatsConnection, "subscribe">,
    private readonly lingerMs = LINGER_MS,
  ) {}

  /** Starts hearing the node's events now: an event after this call is never missed by `next`. */
  listen(nodeId: string): NodeEventWaiter {
    const feed = this.#feeds.get(nodeId) ?? this.#open(nodeId);
    clearTimeout(feed.idle);
    feed.idle = undefined;
    const waiting: Waiting = { events: [], wake: undefined, closed: false };
    feed.waiters.add(waiting);
    return {
      next: async () => {
        while (waiting.events.length === 0 && !waiting.closed)
          await new Promise<void>((resolve) => {
            waiting.wake = resolve;
          });
        if (waiting.events.length === 0) return null;
        return waiting.events.splice(0);
      },
      heard: () => feed.heard,
      rememberAnswer: (heardBefore, { jobs, held = [] }) => {
        const delivered = new Set(jobs.map(nameOf));
        feed.answer = { heardBefore, delivered, told: new Set([...delivered, ...held.map(nameOf)]) };
      },
      answered: (known) => feed.answer?.heardBefore === feed.heard && told(feed.answer, known),
      answeredBefore: (known, came) =>
        came.length > 0 &&
        feed.answer?.heardBefore === came[0]!.seq - 1 &&
        came.at(-1)!.seq === feed.heard &&
        told(feed.answer, known),
      close: () => {
        if (waiting.closed) return;
        waiting.closed = true;
        waiting.wake?.();
        feed.waiters.delete(waiting);
        if (feed.waiters.size === 0 && this.#feeds.get(nodeId) === feed)
          feed.idle = setTimeout(() => this.#drop(nodeId, feed), this.lingerMs);
      },
    };
  }

  /** Forgets every kept answer: events may have been lost (the connection to NATS was interrupted). */
  forgetAnswers(): void {
    for (const feed of this.#feeds.values()) feed.answer = undefined;
  }

  /** Closes every node's subscription (the gateway is stopping); waiting polls end as closed. */
  close(): void {
    for (const [nodeId, feed] of this.#feeds) this.#drop(nodeId, feed);
  }

  #open(nodeId: string): NodeFeed {
    const feed: NodeFeed = {
      subscription: this.nc.subscribe(subjects.nodeEvents(nodeId), {
        callback: (_error, message) => {
          feed.heard += 1;
          const event: NodeEvent = { subject: message.subject, data: message.data, seq: feed.heard };
          for (const waiting of feed.waiters) {
            waiting.events.push(event);
            waiting.wake?.();
          }
        },
      }),
      waiters: new Set(),
      idle: undefined,
      heard: 0,
      answer: undefined,
    };
    this.#feeds.set(nodeId, feed);
    return feed;
  }

  #drop(nodeId: string, feed: NodeFeed): void {
    clearTimeout(feed.idle);
    if (this.#feeds.get(nodeId) === feed) this.#feeds.delete(nodeId);
    feed.subscription.unsubscribe();
    for (const waiting of feed.waiters) {
      waiting.closed = true;
      waiting.wake?.();
    }
    feed.waiters.clear();
  }
}
