/**
 * One page of a list already in its order: the items after the one whose id is `cursor`
 * (from the start without one, or when the cursor is no longer listed), and the id to
 * pass for the next page, or null on the last.
 */
export function pageAfter<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  cursor: string | undefined,
  limit: number,
): { items: T[]; next_cursor: string | null } {
  const start = cursor === undefined ? 0 : items.findIndex((item) => idOf(item) === cursor) + 1;
  const page = items.slice(start, start + limit);
  const last = page.at(-1);
  return { items: page, next_cursor: last !== undefined && start + limit < items.length ? idOf(last) : null };
}
