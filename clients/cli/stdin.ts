/** All of stdin as text (a password or a job file piped in). */
export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stdin) text += typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8");
  return text;
}
