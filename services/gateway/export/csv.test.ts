import { describe, expect, it } from "vitest";
import { csvCell, csvRow } from "./csv.js";

describe("csvCell", () => {
  it("writes plain text, numbers, booleans and null as they are (null empty)", () => {
    expect([csvCell("shell"), csvCell(42), csvCell(-1.5), csvCell(true), csvCell(null)]).toEqual([
      "shell",
      "42",
      "-1.5",
      "true",
      "",
    ]);
  });

  it("quotes a cell with a comma, a quote or a line break, doubling quotes", () => {
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("line1\nline2")).toBe('"line1\nline2"');
    expect(csvCell("cr\rhere")).toBe('"cr\rhere"');
  });

  it("prefixes text a spreadsheet would run as a formula with a quote mark", () => {
    for (const text of ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx"]) expect(csvCell(text)).toBe(`'${text}`);
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvCell("a=b")).toBe("a=b");
  });
});

describe("csvRow", () => {
  it("joins cells with commas and ends with CRLF", () => {
    expect(csvRow(["job_1", null, 3, "x,y"])).toBe('job_1,,3,"x,y"\r\n');
  });
});
