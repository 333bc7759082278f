import { describe, expect, it } from "vitest";
import { LineSplitter, MAX_LINE_CHARS } from "./line-splitter.js";

describe("LineSplitter", () => {
  it("keeps a partial line until its newline arrives", () => {
    const splitter = new LineSplitter();
    expect(splitter.push(Buffer.from("one\ntw"))).toEqual(["one"]);
    expect(splitter.push(Buffer.from("o\nthree"))).toEqual(["two"]);
    expect(splitter.end()).toEqual(["three"]);
  });

  it("adds no empty line after a final newline, and keeps empty lines inside", () => {
    const splitter = new LineSplitter();
    expect(splitter.push(Buffer.from("a\n\nb\n"))).toEqual(["a", "", "b"]);
    expect(splitter.end()).toEqual([]);
  });

  it("decodes a UTF-8 character split across two chunks", () => {
    const bytes = Buffer.from("é\n");
    const splitter = new LineSplitter();
    expect(splitter.push(bytes.subarray(0, 1))).toEqual([]);
    expect(splitter.push(bytes.subarray(1))).toEqual(["é"]);
  });

  it("cuts a line longer than the service stores into pieces, without splitting a surrogate pair", () => {
    const splitter = new LineSplitter();
    const long = `${"x".repeat(MAX_LINE_CHARS - 1)}😀tail`;
    const lines = [...splitter.push(Buffer.from(`${long}\n`)), ...splitter.end()];
    expect(lines).toEqual(["x".repeat(MAX_LINE_CHARS - 1), "😀tail"]);
    expect(lines.join("")).toBe(long);
  });

  it("sends a line with no newline in sight in pieces rather than holding it", () => {
    const splitter = new LineSplitter();
    expect(splitter.push(Buffer.from("y".repeat(MAX_LINE_CHARS + 10)))).toEqual(["y".repeat(MAX_LINE_CHARS)]);
    expect(splitter.end()).toEqual(["y".repeat(10)]);
  });
});
