import { describe, expect, it } from "vitest";
import { readServerSentEvents, type ServerSentEvent } from "./sse.js";

/** A byte stream delivering `chunks` one by one, as a network would split them. */
function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function eventsOf(chunks: string[]): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readServerSentEvents(streamOf(chunks))) events.push(event);
  return events;
}

describe("framing Server-Sent Events", () => {
  it("reads id, event and data, skips comments, and joins data lines with LF", async () => {
    const events = await eventsOf([
      ': keep-alive\n\nid: 7\nevent: log\ndata: {"a":1}\n\nevent: end\ndata: one\ndata: two\n\n',
    ]);
    expect(events).toEqual([
      { id: "7", event: "log", data: '{"a":1}' },
      { id: undefined, event: "end", data: "one\ntwo" },
    ]);
  });

  it("accepts CRLF and CR line ends, also a CRLF split between two chunks", async () => {
    const events = await eventsOf(["id: 1\r", "\nevent: log\r\ndata: x\r\r", "id: 2\rdata: y\r\n\r\n"]);
    expect(events).toEqual([
      { id: "1", event: "log", data: "x" },
      { id: "2", event: "message", data: "y" },
    ]);
  });

  it("a multi-byte character split between chunks arrives whole", async () => {
    const bytes = new TextEncoder().encode("data: é\n\n");
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.close();
      },
    });
    const events: ServerSentEvent[] = [];
    for await (const event of readServerSentEvents(stream)) events.push(event);
    expect(events).toEqual([{ id: undefined, event: "message", data: "é" }]);
  });

  it("an event the stream cut before its blank line is not delivered", async () => {
    expect(await eventsOf(["id: 1\ndata: whole\n\nid: 2\ndata: cut"])).toEqual([
      { id: "1", event: "message", data: "whole" },
    ]);
  });
});
