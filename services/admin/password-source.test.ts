import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPassword, type PasswordIo } from "./password-source.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "password-source-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function io(stdinText: string, isTTY = false): PasswordIo {
  const stdin = Object.assign(Readable.from([stdinText]), { isTTY });
  return { stdin, prompt: () => expect.unreachable("no prompt without a terminal") };
}

describe("readPassword", () => {
  it("takes the first line of stdin as it is, spaces included", async () => {
    expect(await readPassword({ from: "stdin" }, io(" correct horse battery \r\nsecond line\n"))).toBe(
      " correct horse battery ",
    );
    expect(await readPassword({ from: "stdin" }, io("no newline at the end"))).toBe("no newline at the end");
  });

  it("refuses an empty stdin", async () => {
    await expect(readPassword({ from: "stdin" }, io(""))).rejects.toThrow(
      "--password-stdin: stdin had no password on its first line",
    );
  });

  it("takes the first line of a file, and names the file it cannot read or whose first line is empty", async () => {
    const path = join(dir, "pw");
    await writeFile(path, "correct horse battery\n");
    expect(await readPassword({ from: "file", path }, io(""))).toBe("correct horse battery");
    await expect(readPassword({ from: "file", path: join(dir, "missing") }, io(""))).rejects.toThrow(
      `--password-file: cannot read ${join(dir, "missing")} (ENOENT)`,
    );
    await writeFile(path, "\nsecond\n");
    await expect(
      readPassword({ from: "file", path, setting: "bootstrap.json: password_file" }, io("")),
    ).rejects.toThrow("bootstrap.json: password_file: the first line");
  });

  it("will not prompt when stdin is not a terminal, and says what to use", async () => {
    await expect(readPassword({ from: "prompt" }, io("piped\n"))).rejects.toThrow(
      "stdin is not a terminal to ask on: use --password-stdin or --password-file PATH",
    );
  });
});
