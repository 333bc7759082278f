import { createInterface, type Interface } from "node:readline/promises";
import { Writable } from "node:stream";

/** The operator pressed Ctrl-C or Ctrl-D at a prompt: nothing is sent. */
export class PromptCancelled extends Error {
  constructor() {
    super("cancelled at the prompt; nothing was sent");
    this.name = "PromptCancelled";
  }
}

/**
 * Questions on the terminal. Prompts go to `output` (stderr, so `--json` output stays
 * clean); a secret's keystrokes are not echoed: readline puts the terminal in raw mode and
 * writes its echo to a sink that drops it while muted.
 */
export class TerminalPrompt {
  readonly #rl: Interface;
  readonly #output: NodeJS.WritableStream;
  readonly #cancel = new AbortController();
  #muted = false;

  constructor(input: NodeJS.ReadableStream, output: NodeJS.WritableStream) {
    this.#output = output;
    const echo = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        if (!this.#muted) output.write(chunk);
        done();
      },
    });
    this.#rl = createInterface({ input, output: echo, terminal: true });
    this.#rl.on("SIGINT", () => this.#cancel.abort());
    this.#rl.on("close", () => this.#cancel.abort());
  }

  /** One line, echoed, without surrounding spaces. */
  async ask(question: string): Promise<string> {
    return (await this.#question(question)).trim();
  }

  /** One line, not echoed, kept exactly as typed. */
  async askSecret(question: string): Promise<string> {
    this.#output.write(question);
    this.#muted = true;
    try {
      return await this.#question("");
    } finally {
      this.#muted = false;
      this.#output.write("\n");
    }
  }

  /** A line for the operator (a hint after a refused answer). */
  say(text: string): void {
    this.#output.write(`${text}\n`);
  }

  close(): void {
    this.#rl.close();
  }

  async #question(question: string): Promise<string> {
    try {
      return await this.#rl.question(question, { signal: this.#cancel.signal });
    } catch (error) {
      if (this.#cancel.signal.aborted) throw new PromptCancelled();
      throw error;
    }
  }
}
