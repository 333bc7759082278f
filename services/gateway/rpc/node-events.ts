import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { subjects } from "../../../shared/nats/index.js";

/** How long a node's subscription outlives its last waiting poll: its next poll, a moment later, finds it open. */
const LINGER_MS = 30_000;

/** One waiting poll's view of its node's events: whether one came since it began or last looked, and which. */
export interface NodeEventWaiter {
  /** Resolves with the subjects of the events that came since the last call (at least one), or null once closed. */
  next(): Promise<string[] | null>;
  close(): void;
}

interface NodeFeed {
  subscription: Subscription;
  waiters: Set<Waiting>;
  idle: NodeJS.Timeout | undefined;
}

interface Waiting {
  events: string[];
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

  /** Closes every node's subscription (the gateway is stopping); waiting polls end as closed. */
  close(): void {
    for (const [nodeId, feed] of this.#feeds) this.#drop(nodeId, feed);
  }

  #open(nodeId: string): NodeFeed {
    const feed: NodeFeed = {
      subscription: this.nc.subscribe(subjects.nodeEvents(nodeId), {
        callback: (_error, message) => {
          for (const waiting of feed.waiters) {
            waiting.events.push(message.subject);
            waiting.wake?.();
          }
        },
      }),
      waiters: new Set(),
      idle: undefined,
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
