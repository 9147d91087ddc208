/**
 * Adaptive repeats in the loop (`gate.adaptiveRepeats`, default on;
 * src/gate/noise-free.ts has the rule, its exactness and its source): a
 * candidate is evaluated once on a noise-free example whose one draw agrees
 * with the incumbent's value there, and the incumbent is not topped up where
 * its first `repeats` repeats agree on a noise-free example. The copied
 * example-repeats are counted in the score's `copied` (and the decision's
 * evidence). Off — every example-repeat evaluated — for a deterministic
 * executor (its repeats are identical anyway), with `gate.adaptiveRepeats:
 * false`, or without a calibration that says over how many repeats it
 * measured the per-example SDs.
 *
 * @module
 */
import type { EvaluatedExample, Evaluator } from '../evaluator/evaluator.ts';
import { aggregate, scoreNamesOf } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import type { PartitionName } from '../corpus/example.ts';
import {
  MIN_NOISE_FREE_REPEATS,
  fillStanding,
  noiseFreeReferences,
  standingExamples,
  type NoiseFreeCalibration,
} from '../gate/noise-free.ts';
import { withArtifactOverride } from '../storage/registry.ts';
import { withCallStage } from '../providers/call-stage.ts';
import { evaluatePartition, yieldToEventLoop } from './evaluate-partition.ts';
import type { LoadedStudy } from './loaded-study.ts';

/** True when the study runs with adaptive repeats under this calibration (see the module comment). */
export function adaptiveRepeatsOn(study: LoadedStudy, calibration: NoiseFreeCalibration | undefined): boolean {
  return (
    study.gate.adaptiveRepeats !== false &&
    !study.executor.deterministic &&
    (calibration?.noiseRepeats ?? 0) >= MIN_NOISE_FREE_REPEATS
  );
}

/** The noise-free examples' reference values in an incumbent's score (src/gate/noise-free.ts); empty when the rule is off. */
export function referencesOf(
  study: LoadedStudy,
  calibration: NoiseFreeCalibration | undefined,
  incumbent: PartitionScore,
): Map<string, number> {
  return adaptiveRepeatsOn(study, calibration) ? noiseFreeReferences(calibration!, incumbent.examples) : new Map();
}

interface Part {
  evaluator: Evaluator;
  study: LoadedStudy;
  text: string;
  partition: PartitionName;
  signal: AbortSignal | undefined;
}

function evaluateSome(
  part: Part,
  examples: readonly EvaluatedExample[],
  repeats: number,
  firstRepeat = 0,
  storedOnly = false,
): Promise<PartitionScore> {
  return withArtifactOverride(part.text, async () => {
    await yieldToEventLoop();
    return part.evaluator.evaluate({
      artifactText: part.text,
      partition: part.partition,
      examples,
      repeats,
      firstRepeat,
      ...(storedOnly ? { storedOnly: true } : {}),
      ...(part.signal !== undefined ? { signal: part.signal } : {}),
    });
  });
}

/** One score of the records of several evaluations of one artifact (usage and latency summed), with `copied`. */
function combine(
  part: Part,
  records: readonly ExampleScoreRecord[],
  scores: readonly PartitionScore[],
  copied: number,
) {
  const byRepeat = new Map<number, ExampleScoreRecord[]>();
  for (const record of records) byRepeat.set(record.repeat, [...(byRepeat.get(record.repeat) ?? []), record]);
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  for (const score of scores) {
    usage.inputTokens += score.usage.inputTokens;
    usage.outputTokens += score.usage.outputTokens;
    usage.costUsd += score.usage.costUsd;
  }
  const repeats = [...byRepeat.keys()].sort((left, right) => left - right);
  const score = aggregate(
    part.partition,
    scores[0]!.artifactHash,
    part.evaluator.fingerprint,
    repeats.map((repeat, index) => ({
      records: byRepeat.get(repeat)!,
      usage: index === 0 ? usage : { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      latencyMs: index === 0 ? scores.reduce((sum, each) => sum + each.latencyMs, 0) : 0,
    })),
    scoreNamesOf(part.evaluator.task),
  );
  return { ...score, copied };
}

/**
 * Completes an evaluation: `paid` (its records kept as they are) and the
 * evaluations of `more` (disjoint from `paid`'s example-repeats, so usage
 * adds up), then the standing examples' records copied up to `repeats`.
 */
async function completeWith(
  part: Part,
  paid: PartitionScore,
  more: ReadonlyArray<{ examples: readonly EvaluatedExample[]; repeats: number; firstRepeat: number }>,
  standing: ReadonlySet<string>,
  repeats: number,
): Promise<PartitionScore> {
  const scores = [paid];
  for (const request of more)
    if (request.examples.length > 0 && request.repeats > 0)
      scores.push(await evaluateSome(part, request.examples, request.repeats, request.firstRepeat));
  const order = part.study.partitions[part.partition].map((example) => example.id);
  const filled = fillStanding(
    scores.flatMap((score) => score.examples),
    standing,
    repeats,
    order,
  );
  return combine(part, filled.records, scores, filled.copied);
}

/**
 * The incumbent on a partition with `repeats` (its topped-up repeats): a
 * noise-free example whose stored repeats of this incumbent all agree is not
 * evaluated again — not topped up, and, for a freshly accepted candidate
 * whose one draw agreed with the incumbent before it, not evaluated up to
 * `repeats` either. Nothing stored yet (a seed's first round): every
 * example-repeat is evaluated. Every example-repeat evaluated when the rule
 * is off.
 */
export async function evaluateIncumbentPartition(
  evaluator: Evaluator,
  study: LoadedStudy,
  calibration: NoiseFreeCalibration | undefined,
  input: { text: string; partition: PartitionName; repeats: number; signal?: AbortSignal | undefined },
): Promise<PartitionScore> {
  const { text, partition, repeats, signal } = input;
  if (!adaptiveRepeatsOn(study, calibration))
    return evaluatePartition(evaluator, study, text, partition, signal, repeats);
  const part: Part = { evaluator, study, text, partition, signal };
  const examples = study.partitions[partition];
  const stored = await evaluateSome(part, examples, repeats, 0, true);
  const standing = new Set(noiseFreeReferences(calibration!, stored.examples).keys());
  if (standing.size === 0) return evaluatePartition(evaluator, study, text, partition, signal, repeats);
  const paid = await evaluateSome(
    part,
    examples.filter((example) => standing.has(example.id)),
    repeats,
    0,
    true,
  );
  const rest = examples.filter((example) => !standing.has(example.id));
  return completeWith(part, paid, [{ examples: rest, repeats, firstRepeat: 0 }], standing, repeats);
}

/**
 * A candidate on a partition with `study.gate.repeats`: evaluated once on the
 * examples with a reference value (the incumbent's, {@link referencesOf});
 * where that draw agrees it stands for every repeat, elsewhere every repeat
 * is evaluated.
 */
export async function evaluateCandidatePartition(
  evaluator: Evaluator,
  study: LoadedStudy,
  references: ReadonlyMap<string, number> | undefined,
  input: { text: string; partition: PartitionName; signal?: AbortSignal | undefined; repeats?: number },
): Promise<PartitionScore> {
  const { text, partition, signal } = input;
  const repeats = input.repeats ?? study.gate.repeats;
  if (references === undefined || references.size === 0 || repeats <= 1)
    return evaluatePartition(evaluator, study, text, partition, signal, repeats);
  const part: Part = { evaluator, study, text, partition, signal };
  const probe = study.partitions[partition].filter((example) => references.has(example.id));
  if (probe.length === 0) return evaluatePartition(evaluator, study, text, partition, signal, repeats);
  const first = await evaluateSome(part, probe, 1);
  const standing = standingExamples(references, first.examples);
  return completeWith(
    part,
    first,
    [
      // Every repeat of the examples with no reference; the remaining repeats of those whose one draw differed.
      {
        examples: study.partitions[partition].filter((example) => !references.has(example.id)),
        repeats,
        firstRepeat: 0,
      },
      { examples: probe.filter((example) => !standing.has(example.id)), repeats: repeats - 1, firstRepeat: 1 },
    ],
    standing,
    repeats,
  );
}

/**
 * A candidate's optimization and anchor scores for the gate, through {@link evaluateCandidatePartition}:
 * optimization with `repeats` (default `gate.repeats`; the first k after an early pass), the anchors in full.
 */
export async function evaluateOptimizationAndAnchor(
  evaluator: Evaluator,
  study: LoadedStudy,
  references: { optimization: ReadonlyMap<string, number>; anchor: ReadonlyMap<string, number> },
  input: { text: string; signal?: AbortSignal | undefined; repeats?: number },
): Promise<{ optimization: PartitionScore; anchor: PartitionScore }> {
  const { text, signal } = input;
  const optimization = await withCallStage('candidates', () =>
    evaluateCandidatePartition(evaluator, study, references.optimization, {
      text,
      partition: 'optimization',
      signal,
      ...(input.repeats !== undefined ? { repeats: input.repeats } : {}),
    }),
  );
  const anchor = await withCallStage('candidates', () =>
    evaluateCandidatePartition(evaluator, study, references.anchor, { text, partition: 'anchor', signal }),
  );
  return { optimization, anchor };
}
