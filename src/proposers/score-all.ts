/**
 * Scoring several candidate texts at once: a proposer whose choice of what to
 * score reads no score (the keyword-rules proposer's single edits) hands them
 * all to `evaluateOptimization` together, so they run together — on every
 * evaluation worker with `kloop run --workers` (issue 36, fault 15: one at a
 * time, a candidate's few jobs kept most workers idle), up to the executor's
 * concurrency in one process. The scores, and so every decision, are those of
 * scoring them one after another: the engine counts each in the order asked
 * (src/loop/engine.ts).
 */
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { settleInOrder } from '../evaluator/settle-in-order.ts';
import type { ProposalContext } from './proposer.ts';

/**
 * Scores `texts` on optimization, all at once.
 *
 * @returns the scores, in the order of `texts`
 * @throws the first failure in that order (an infrastructure failure, an
 * abort), once every evaluation has ended: none is left running behind the
 * proposer
 */
export async function scoreAll(
  context: Pick<ProposalContext, 'evaluateOptimization'>,
  texts: readonly string[],
): Promise<PartitionScore[]> {
  return settleInOrder(texts.map((text) => context.evaluateOptimization(text)));
}
