/**
 * Awaiting evaluations started together, with the failure of the first in
 * order: evaluations run at once (a proposer's screening,
 * src/proposers/score-all.ts) end as the same evaluations one after another
 * would, whichever finishes first — a run that stops on an infrastructure
 * failure names the same failure every time.
 */

/**
 * Awaits every promise of `work`, in their order.
 *
 * @returns the values, in the order of `work`
 * @throws the rejection of the first that rejected, in the order of `work`,
 * once every one has settled (none is left running behind the caller)
 */
export async function settleInOrder<T extends readonly unknown[]>(
  work: readonly [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<T> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
