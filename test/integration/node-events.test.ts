import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subjects } from "../../shared/nats/index.js";
import { newId } from "../../shared/runtime/index.js";
import { type NodeEvent, NodeEvents } from "../../services/gateway/rpc/node-events.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";

/**
 * The gateway's node events for long polls: one subscription per node, shared by its
 * polls and kept between them, and no event that comes after a poll began listening is
 * missed, whenever the poll looks.
 */
let nats: NatsHarness;
let nc: NatsConnection;
let publisher: NatsConnection;
const NODE = newId("nod");
const OTHER = newId("nod");

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  publisher = await connect({ servers: nats.url });
});

afterAll(async () => {
  await publisher?.close();
  await nc?.close();
  await nats?.stop();
});

function subjectsOf(events: readonly NodeEvent[] | null): string[] {
  return (events ?? []).map((event) => event.subject);
}

/** Publishes the node's events and waits until this gateway's connection has them. */
async function publish(...subjectList: string[]): Promise<void> {
  for (const subject of subjectList) publisher.publish(subject);
  await publisher.flush();
  await nc.flush();
}

/** A connection whose subscriptions are counted. */
function counting(): { subscribes: string[]; nc: Pick<NatsConnection, "subscribe"> } {
  const subscribes: string[] = [];
  return {
    subscribes,
    nc: {
      subscribe: (subject, options) => {
        subscribes.push(subject);
        return nc.subscribe(subject, options);
      },
    },
  };
}

describe("NodeEvents", () => {
  it("gives a poll every event published after it began listening, even before it looks", async () => {
    const events = new NodeEvents(nc);
    const waiter = events.listen(NODE);
    await nc.flush();
    publisher.publish(subjects.nodeAssigned(NODE));
    publisher.publish(subjects.nodeDraining(NODE));
    publisher.publish(subjects.nodeAssigned(OTHER));
    await publisher.flush();
    await nc.flush();
    const came: string[] = [];
    while (came.length < 2) came.push(...subjectsOf(await waiter.next()));
    expect(came).toEqual([subjects.nodeAssigned(NODE), subjects.nodeDraining(NODE)]);
    waiter.close();
    events.close();
  });

  it("wakes every poll of the node with one subscription, and keeps it for the node's next poll", async () => {
    const { subscribes, nc: countingNc } = counting();
    const events = new NodeEvents(countingNc);
    const first = events.listen(NODE);
    const second = events.listen(NODE);
    await nc.flush();
    publisher.publish(subjects.nodeReleased(NODE));
    await publisher.flush();
    expect(subjectsOf(await first.next())).toEqual([subjects.nodeReleased(NODE)]);
    expect(subjectsOf(await second.next())).toEqual([subjects.nodeReleased(NODE)]);
    first.close();
    second.close();
    const next = events.listen(NODE);
    expect(subscribes).toEqual([subjects.nodeEvents(NODE)]);
    next.close();
    events.close();
  });

  it("does not hand a poll the events that came before it began listening", async () => {
    const events = new NodeEvents(nc);
    const earlier = events.listen(NODE);
    await nc.flush();
    publisher.publish(subjects.nodeAssigned(NODE));
    await publisher.flush();
    expect(subjectsOf(await earlier.next())).toEqual([subjects.nodeAssigned(NODE)]);
    earlier.close();
    const later = events.listen(NODE);
    publisher.publish(subjects.nodeReleased(NODE));
    await publisher.flush();
    expect(subjectsOf(await later.next())).toEqual([subjects.nodeReleased(NODE)]);
    later.close();
    events.close();
  });

  it("ends a waiting poll with null when it is closed or the gateway stops, and subscribes again after", async () => {
    const { subscribes, nc: countingNc } = counting();
    const events = new NodeEvents(countingNc);
    const closedByItself = events.listen(NODE);
    const waiting = closedByItself.next();
    closedByItself.close();
    expect(await waiting).toBeNull();
    const endedByStop = events.listen(NODE);
    const stopped = endedByStop.next();
    events.close();
    expect(await stopped).toBeNull();
    events.listen(NODE).close();
    expect(subscribes).toEqual([subjects.nodeEvents(NODE), subjects.nodeEvents(NODE)]);
    events.close();
  });

  describe("answeredBefore: whether the events alone tell the node all the scheduler would", () => {
    const FIRST = { job_id: newId("job"), attempt: 1 };
    const SECOND = { job_id: newId("job"), attempt: 1 };

    /** A waiting poll whose kept answer gave the node FIRST, and the one assigned event that came since. */
    async function answeredThenAssigned() {
      const events = new NodeEvents(nc);
      const waiter = events.listen(NODE);
      await nc.flush();
      waiter.rememberAnswer(waiter.heard(), { jobs: [FIRST], held: [FIRST] });
      await publish(subjects.nodeAssigned(NODE));
      const came = (await waiter.next())!;
      return {
        waiter,
        came,
        close() {
          waiter.close();
          events.close();
        },
      };
    }

    it("holds when the node knows the kept answer and the events are all that came since", async () => {
      const { waiter, came, close } = await answeredThenAssigned();
      expect(waiter.answeredBefore([FIRST], came)).toBe(true);
      close();
    });

    it("fails when an event came before the kept answer was asked", async () => {
      const events = new NodeEvents(nc);
      const waiter = events.listen(NODE);
      await nc.flush();
      const heardBefore = waiter.heard();
      await publish(subjects.nodeAssigned(NODE));
      await waiter.next();
      // Asked before the event already looked at came: the answer may not cover it.
      waiter.rememberAnswer(heardBefore, { jobs: [FIRST], held: [FIRST] });
      await publish(subjects.nodeAssigned(NODE));
      expect(waiter.answeredBefore([FIRST], (await waiter.next())!)).toBe(false);
      waiter.close();
      events.close();
    });

    it("fails when another event came after those looked at", async () => {
      const { waiter, came, close } = await answeredThenAssigned();
      await publish(subjects.nodeReleased(NODE));
      expect(waiter.answeredBefore([FIRST], came)).toBe(false);
      close();
    });

    it("fails when the node does not know what the kept answer gave it, or knows what it was not told", async () => {
      const { waiter, came, close } = await answeredThenAssigned();
      expect(waiter.answeredBefore([], came)).toBe(false);
      expect(waiter.answeredBefore([FIRST, SECOND], came)).toBe(false);
      expect(waiter.answeredBefore([FIRST], [])).toBe(false);
      close();
    });
  });
});
