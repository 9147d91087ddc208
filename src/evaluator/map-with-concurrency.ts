/**
 * Bounded concurrency for the evaluator and the loop's screening.
 *
 * @module
 */
/**
 * Runs `work` over `items` with at most `limit` in flight; rejects on the
 * first failure, and starts no new item after it (the items in flight run to
 * their end: a budget error or a refused key must not be met again for every
 * item left).
 */
export async function mapWithConcurrency<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length && !failed) {
      const index = next;
      next += 1;
      try {
        await work(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  await Promise.all(workers);
}
