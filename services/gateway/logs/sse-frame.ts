export interface SseEvent {
  name: string;
  /** Written as JSON. */
  data: unknown;
  id?: number | undefined;
}

/** One Server-Sent Event as written on the wire; `data` is JSON, so it never contains a line break. */
export function sseFrame({ name, data, id }: SseEvent): string {
  const idLine = id === undefined ? "" : `id: ${id}\n`;
  return `${idLine}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
