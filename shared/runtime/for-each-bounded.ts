/**
 * Runs `work` for every item with at most `limit` calls in flight, and resolves once all
 * have settled. A failing call rejects the whole, after the others have settled, with the
 * first failure; a caller that wants to go on catches inside `work`.
 */
export async function forEachBounded<T>(
  items: Iterable<T>,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const queue = [...items];
  let firstFailure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (queue.length > 0) {
      const item = queue.shift() as T;
      try {
        await work(item);
      } catch (error) {
        firstFailure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, queue.length)) }, lane));
  if (firstFailure) throw firstFailure.error;
}
