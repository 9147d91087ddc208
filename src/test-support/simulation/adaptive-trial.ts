/**
 * Adaptive repeats on simulated evaluations (src/gate/noise-free.ts), on the
 * same draws as full evaluation (`bench/gate-bench.ts`): an evaluation drawn
 * in full is cut down to what the rule would have paid for, and the records
 * it would not have paid for are replaced by the copies the rule makes.
 *
 * - The incumbent (evaluated with `incumbentRepeats` ≥ R): a noise-free
 *   example whose first R repeats agree is not topped up — its first record
 *   stands for repeats R … (its top-ups are not paid).
 * - A candidate, on optimization and anchor: a noise-free example (a
 *   reference value in the incumbent's records) whose repeat-0 draw agrees
 *   with the reference stands for repeats 1 … R − 1 (not paid). The shadow
 *   is evaluated in full.
 */
import { aggregate } from '../../evaluator/evaluator.ts';
import type { ExampleScoreRecord, PartitionScore } from '../../evaluator/partition-score.ts';
import {
  fillStanding,
  noiseFreeReferences,
  standingExamples,
  type NoiseFreeCalibration,
} from '../../gate/noise-free.ts';
import type { SimulatedEvaluation } from './gate-trial.ts';

/** An evaluation as the rule pays for it, and the example-repeats it did not pay for. */
export interface AdaptiveEvaluation {
  evaluation: SimulatedEvaluation;
  /** Example-repeats copied instead of evaluated (every partition). */
  saved: number;
}

/** The score of `records` (grouped by repeat), the partition, hash and fingerprint of `score`. */
function rebuild(score: PartitionScore, records: readonly ExampleScoreRecord[]): PartitionScore {
  const byRepeat = new Map<number, ExampleScoreRecord[]>();
  for (const record of records) {
    const list = byRepeat.get(record.repeat) ?? [];
    list.push(record);
    byRepeat.set(record.repeat, list);
  }
  return aggregate(
    score.partition,
    score.artifactHash,
    score.fingerprint,
    [...byRepeat.keys()]
      .sort((left, right) => left - right)
      .map((repeat) => ({
        records: byRepeat.get(repeat)!,
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        latencyMs: 0,
      })),
  );
}

/** `score` with the standing examples' records of repeats ≥ `paidRepeats` replaced by copies of their first record. */
function cut(
  score: PartitionScore,
  standing: ReadonlySet<string>,
  paidRepeats: number,
): { score: PartitionScore; saved: number } {
  if (standing.size === 0) return { score, saved: 0 };
  const paid = score.examples.filter((record) => record.repeat < paidRepeats || !standing.has(record.exampleId));
  const filled = fillStanding(paid, standing, score.repeats);
  return { score: rebuild(score, filled.records), saved: filled.copied };
}

const PARTITIONS = ['optimization', 'anchor', 'shadow'] as const;

/**
 * The incumbent with its top-ups (repeats ≥ `repeats`) skipped on noise-free
 * examples whose first `repeats` repeats agree, on every partition.
 *
 * @param repeats R: the repeats every incumbent is evaluated with before any top-up
 */
export function adaptiveIncumbent(
  incumbent: SimulatedEvaluation,
  calibration: NoiseFreeCalibration,
  repeats: number,
): AdaptiveEvaluation {
  let saved = 0;
  const evaluation = { ...incumbent };
  for (const partition of PARTITIONS) {
    const score = incumbent[partition];
    const first = score.examples.filter((record) => record.repeat < repeats);
    const standing = new Set(noiseFreeReferences(calibration, first).keys());
    const result = cut(score, standing, repeats);
    evaluation[partition] = result.score;
    saved += result.saved;
  }
  return { evaluation, saved };
}

/**
 * A candidate evaluated once on the noise-free examples of optimization and
 * anchor (references from the incumbent's records) where that draw agrees;
 * its shadow in full.
 */
export function adaptiveCandidate(
  candidate: SimulatedEvaluation,
  incumbent: SimulatedEvaluation,
  calibration: NoiseFreeCalibration,
): AdaptiveEvaluation {
  let saved = 0;
  const evaluation = { ...candidate };
  for (const partition of ['optimization', 'anchor'] as const) {
    const references = noiseFreeReferences(calibration, incumbent[partition].examples);
    const draws = candidate[partition].examples.filter((record) => record.repeat === 0);
    const result = cut(candidate[partition], standingExamples(references, draws), 1);
    evaluation[partition] = result.score;
    saved += result.saved;
  }
  return { evaluation, saved };
}
