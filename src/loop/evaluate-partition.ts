/**
 * Evaluating artifacts for the loop: one named partition of the study
 * through the frozen evaluator, inside the context-local artifact override,
 * and the incumbent's repeats (topped up while it stays the incumbent).
 */
import type { PartitionName } from '../corpus/example.ts';
import type { EvaluateRequest, Evaluator, RemoteExecution, ResultsStore } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import { aggregate, createEvaluator, scoreNamesOf } from '../evaluator/evaluator.ts';
import { contentHash } from '../artifact/content-hash.ts';
import { withArtifactOverride } from '../storage/registry.ts';
import type { LoadedStudy } from './loaded-study.ts';

/** Resolves after pending timers, I/O and signal handlers have had their turn. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Evaluates one artifact on a named partition of the study, `repeats` times
 * (default the study's `gate.repeats`). `options.storedOnly`: read stored
 * results only, execute nothing (see `EvaluateRequest.storedOnly`).
 */
export function evaluatePartition(
  evaluator: Evaluator,
  study: LoadedStudy,
  artifactText: string,
  partition: PartitionName,
  signal?: AbortSignal,
  repeats: number = study.gate.repeats,
  options: Pick<EvaluateRequest, 'storedOnly'> = {},
): Promise<PartitionScore> {
  return withArtifactOverride(artifactText, async () => {
    // Let timers and signal handlers (Ctrl-C) run between evaluations: the offline executor never yields.
    await yieldToEventLoop();
    return evaluator.evaluate({
      artifactText,
      partition,
      examples: study.partitions[partition],
      repeats,
      ...(signal !== undefined ? { signal } : {}),
      ...(options.storedOnly === true ? { storedOnly: true } : {}),
    });
  });
}

/** How the study's evaluator reads stored results. */
export interface StudyEvaluatorOptions {
  /**
   * Read only results stored at or after this ISO 8601 time (`--no-cache`:
   * nothing from earlier runs; results of this run are still reused).
   */
  readSince?: string;
  /** Execute what is not stored yet on evaluation workers (`kloop run --workers`: src/storage/evaluation-queue.ts). */
  remote?: RemoteExecution;
  /** Store and read results under this key instead of the fingerprint (the screening's scratch key: src/loop/scratch-evaluator.ts). */
  storedAs?: string;
}

/**
 * Executions the study's evaluator issues at once per artifact: 2 ×
 * `proposer.concurrency`, and at least the executor's own limit
 * (`executor.maxInFlight`: an llm executor's `providers.<name>.maxInFlight`,
 * a command executor's `concurrency`), so that limit is what is observed.
 * What is in flight at the provider is capped by the provider's limiter,
 * across candidates, the proposer included.
 */
export function evaluationConcurrency(study: Pick<LoadedStudy, 'concurrency' | 'executor'>): number {
  return Math.max(study.concurrency * 2, study.executor.maxInFlight ?? 0);
}

/** Creates the study's frozen evaluator (stored results in `results`: the study's notebook). */
export function createStudyEvaluator(
  study: LoadedStudy,
  results?: ResultsStore,
  options: StudyEvaluatorOptions = {},
): Evaluator {
  return createEvaluator({
    task: study.task,
    executor: study.executor,
    corpus: study.corpus,
    weights: study.weights,
    concurrency: evaluationConcurrency(study),
    ...(results !== undefined ? { results } : {}),
    ...(options.readSince !== undefined ? { readSince: options.readSince } : {}),
    ...(results !== undefined && options.remote !== undefined ? { remote: options.remote } : {}),
    ...(options.storedAs !== undefined ? { storedAs: options.storedAs } : {}),
  });
}

/**
 * Repeats the incumbent is evaluated with in a round, for a stochastic
 * executor: `repeats` × (1 + rounds it has already served as the incumbent),
 * capped at `gate.incumbentRepeats`. Each round it stays the incumbent it is
 * topped up with `repeats` fresh samples (its earlier repeats are stored and
 * reused), so one lucky first draw cannot block real gains for long, and a
 * freshly accepted candidate's winning draw is diluted as soon as the next
 * round. A deterministic executor gives the same answer every time: `repeats`.
 *
 * @param servedRounds completed rounds since the incumbent became active (≥ 0)
 */
export function incumbentRepeats(study: LoadedStudy, servedRounds: number): number {
  const repeats = study.gate.repeats;
  if (study.executor.deterministic) return repeats;
  const cap = Math.max(repeats, study.gate.incumbentRepeats ?? repeats);
  return Math.min(cap, repeats * (1 + Math.max(0, servedRounds)));
}

/**
 * Evaluates some example-repeats of one partition (a race's batch): the
 * example-repeats are grouped by repeat, each group one evaluator call (so
 * each is stored, under the same key a full evaluation reads).
 */
export async function evaluateSlots(
  evaluator: Evaluator,
  study: LoadedStudy,
  artifactText: string,
  partition: PartitionName,
  slots: ReadonlyArray<{ exampleId: string; repeat: number }>,
  signal?: AbortSignal,
): Promise<ExampleScoreRecord[]> {
  const byRepeat = new Map<number, Set<string>>();
  for (const slot of slots) {
    const ids = byRepeat.get(slot.repeat) ?? new Set<string>();
    ids.add(slot.exampleId);
    byRepeat.set(slot.repeat, ids);
  }
  const records: ExampleScoreRecord[] = [];
  for (const [repeat, ids] of byRepeat) {
    const examples = study.partitions[partition].filter((example) => ids.has(example.id));
    const score = await withArtifactOverride(artifactText, async () => {
      await yieldToEventLoop();
      return evaluator.evaluate({
        artifactText,
        partition,
        examples,
        repeats: 1,
        firstRepeat: repeat,
        ...(signal !== undefined ? { signal } : {}),
      });
    });
    records.push(...score.examples);
  }
  return records;
}

/** A partition score of the example-repeats a race evaluated (a partial evaluation, for the notebook). */
export function partialScore(
  evaluator: Evaluator,
  partition: PartitionName,
  artifactText: string,
  records: readonly ExampleScoreRecord[],
): PartitionScore {
  const repeats = [...new Set(records.map((record) => record.repeat))].sort((left, right) => left - right);
  return aggregate(
    partition,
    contentHash(artifactText),
    evaluator.fingerprint,
    repeats.map((repeat) => ({
      records: records.filter((record) => record.repeat === repeat),
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      latencyMs: 0,
    })),
    scoreNamesOf(evaluator.task),
  );
}
