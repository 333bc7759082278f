import { StringDecoder } from "node:string_decoder";

/** The longest line the service stores; a longer one is cut into pieces of this size. */
export const MAX_LINE_CHARS = 65_536;

/**
 * Turns a byte stream into lines: UTF-8 decoded across chunk boundaries, split at `\n`,
 * the partial last line kept until its newline or the end of the stream.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";

  push(chunk: Buffer): string[] {
    return this.split(this.partial + this.decoder.write(chunk));
  }

  /** The rest, once the stream has ended: a last line without a newline, if any. */
  end(): string[] {
    const rest = this.partial + this.decoder.end();
    this.partial = "";
    return rest === "" ? [] : cut(rest);
  }

  private split(text: string): string[] {
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    const lines = parts.flatMap(cut);
    // A line with no newline in sight is sent in pieces rather than held without bound.
    while (this.partial.length > MAX_LINE_CHARS) {
      const end = pieceEnd(this.partial);
      lines.push(this.partial.slice(0, end));
      this.partial = this.partial.slice(end);
    }
    return lines;
  }
}

/** Where to cut a long text: at the limit, or one short of it so a surrogate pair stays whole. */
function pieceEnd(text: string): number {
  const code = text.charCodeAt(MAX_LINE_CHARS - 1);
  return code >= 0xd800 && code <= 0xdbff ? MAX_LINE_CHARS - 1 : MAX_LINE_CHARS;
}

function cut(line: string): string[] {
  if (line.length <= MAX_LINE_CHARS) return [line];
  const pieces: string[] = [];
  let rest = line;
  while (rest.length > MAX_LINE_CHARS) {
    const end = pieceEnd(rest);
    pieces.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  pieces.push(rest);
  return pieces;
}
