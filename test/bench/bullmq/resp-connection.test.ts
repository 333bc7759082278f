import { describe, expect, it } from "vitest";
import { encodeCommand, parseReply } from "./resp-connection.js";

const parse = (text: string) => parseReply(Buffer.from(text), 0);

describe("bench RESP wire", () => {
  it("encodes a command as an array of bulk strings, byte lengths for text and buffers alike", () => {
    expect(encodeCommand("SET", ["k", 12, Buffer.from([0xff]), "é"]).toString("latin1")).toBe("*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n12\r\n$1\r\n\xff\r\n$2\r\n\xc3\xa9\r\n");
  });

  it("parses each reply type, with an error inside an array (EXEC) as a value", () => {
    expect(parse("+OK\r\n")).toEqual({ value: "OK", end: 5 });
    expect(parse(":42\r\n")).toEqual({ value: 42, end: 5 });
    expect(parse("$-1\r\n")).toEqual({ value: null, end: 5 });
    expect(parse("$2\r\né\r\n")).toEqual({ value: "é", end: 8 });
    const array = parse("*3\r\n$1\r\na\r\n-ERR no\r\n*0\r\n");
    expect(typeof array).toBe("object");
    const { value } = array as { value: unknown[] };
    expect(value[0]).toBe("a");
    expect(value[1]).toBeInstanceOf(Error);
    expect((value[1] as Error).message).toBe("ERR no");
    expect(value[2]).toEqual([]);
  });

  it("a reply cut anywhere is incomplete, and parses whole once the rest arrives", () => {
    const whole = "*2\r\n$5\r\nhello\r\n:7\r\n";
    for (let cut = 1; cut < whole.length; cut++) expect(typeof parse(whole.slice(0, cut))).toBe("symbol");
    expect(parse(whole)).toEqual({ value: ["hello", 7], end: whole.length });
  });

  it("parses the second of two pipelined replies from where the first ended", () => {
    const buffer = Buffer.from("+A\r\n+B\r\n");
    const first = parseReply(buffer, 0) as { end: number };
    expect(parseReply(buffer, first.end)).toEqual({ value: "B", end: 8 });
  });
});
