/**
 * The evaluate and integrate phases of a round.
 *
 * - **screen** (parallel explore): every fresh candidate is evaluated on the
 *   optimization and anchor partitions, `study.concurrency` at a time;
 * - **integrate** (sequential): each screened candidate is gated against the
 *   incumbent as it stands after the previous merge. When the incumbent moved
 *   since the round opened, the candidate is first *rebased*: its change is
 *   re-applied to the new incumbent (its own `rebase`, else a three-way
 *   merge), re-evaluated where its text changed, and re-gated. A candidate is
 *   never discarded unjudged: only a change the incumbent already contains is
 *   skipped, as a duplicate of it.
 */
import { contentHash } from '../artifact/content-hash.ts';
import { changeText, lineChanges, rebaseText } from '../artifact/three-way-merge.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import { mapWithConcurrency, scorerErrors } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import type { GateCalibration, GateDecision, GateSettings, ShadowPair } from '../gate/gate.ts';
import { comparePaired, decide } from '../gate/gate.ts';
import {
  planRace,
  raceShadow,
  shadowFutilityContext,
  shadowStop,
  type RaceEvidence,
  type RacingSettings,
} from '../gate/racing/index.ts';
import type { SequentialJudgement } from '../gate/sequential.ts';
import type { Candidate } from '../proposers/proposer.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { evaluatePartition, evaluateSlots, partialScore } from './evaluate-partition.ts';
import { evaluateCandidatePartition, evaluateIncumbentPartition } from './adaptive-evaluation.ts';
import { withCallStage } from '../providers/call-stage.ts';

/** A candidate evaluated on the optimization and anchor partitions. */
export interface ScreenedCandidate {
  candidate: Candidate;
  text: string;
  hash: string;
  optimization: PartitionScore;
  anchor: PartitionScore;
  /** The race evidence of a raced candidate (stored with its decision under `racing`). */
  racing?: RaceEvidence;
}

/**
 * Evaluates every candidate on optimization and anchor, `study.concurrency` at a time; sorted best first.
 * `references`: the incumbent's noise-free values per partition (adaptive repeats, src/loop/adaptive-evaluation.ts); default none.
 */
export async function screenCandidates(
  evaluator: Evaluator,
  study: LoadedStudy,
  candidates: readonly Candidate[],
  signal?: AbortSignal,
  references?: { optimization: ReadonlyMap<string, number>; anchor: ReadonlyMap<string, number> },
): Promise<ScreenedCandidate[]> {
  const screened: ScreenedCandidate[] = [];
  await mapWithConcurrency(candidates, study.concurrency, (candidate) =>
    withCallStage('candidates', async () => {
      const optimization = await evaluateCandidatePartition(evaluator, study, references?.optimization, {
        text: candidate.text,
        partition: 'optimization',
        signal,
      });
      const anchor = await evaluateCandidatePartition(evaluator, study, references?.anchor, {
        text: candidate.text,
        partition: 'anchor',
        signal,
      });
      screened.push({ candidate, text: candidate.text, hash: contentHash(candidate.text), optimization, anchor });
    }),
  );
  return screened.sort(
    (left, right) =>
      (right.optimization.composite ?? -1) - (left.optimization.composite ?? -1) || left.hash.localeCompare(right.hash),
  );
}

/** A candidate re-applied to a newer incumbent. */
export type Rebase =
  | { kind: 'unchanged' }
  | { kind: 'rebased'; text: string; method: 'proposer' | 'three-way-merge'; conflicts: number }
  | { kind: 'contained' };

/**
 * Re-applies `candidate` (proposed against `base`) to `incumbent`. `contained`
 * when the incumbent already holds the candidate's change.
 */
export function rebaseCandidate(candidate: Candidate, base: ArtifactVersion, incumbent: ArtifactVersion): Rebase {
  if (incumbent.id === base.id) return { kind: 'unchanged' };
  const own = candidate.rebase?.(incumbent.text) ?? null;
  if (own !== null && own !== incumbent.text) return { kind: 'rebased', text: own, method: 'proposer', conflicts: 0 };
  const merged = rebaseText(base.text, candidate.text, incumbent.text);
  if (merged.text === incumbent.text) return { kind: 'contained' };
  return { kind: 'rebased', text: merged.text, method: 'three-way-merge', conflicts: merged.conflicts };
}

/** The lines a text adds and removes against another, as stored with an experiment. */
export function changeOf(before: string, after: string): string {
  return changeText(lineChanges(before, after));
}

/**
 * A refusal (`invalid`, its `validity` check naming the scorer) for a candidate on some of whose
 * outputs the task's scorer threw: recorded as that candidate's failure, with
 * the scorer's messages (each names its example), and the run goes on.
 */
export function scorerFailure(scores: readonly PartitionScore[]): GateDecision | undefined {
  const messages = scorerErrors(scores);
  if (messages.length === 0) return undefined;
  const total = scores.reduce((sum, score) => sum + score.total, 0);
  return {
    accepted: false,
    reason: 'invalid',
    shadowConsulted: false,
    checks: [
      {
        name: 'validity',
        passed: false,
        statistic: messages.length,
        threshold: 0,
        detail: `the scorer failed on ${messages.length} of this candidate's ${total} outputs on optimization and anchor (not stored; a fixed scorer is a new evaluator): ${messages.slice(0, 3).join('; ')}`,
        data: { failed: messages.length, total, messages: messages.slice(0, 3) },
      },
    ],
  };
}

/** A refusal for a candidate whose evaluation hit transient failures (timeouts, server errors). */
export function evaluationFailure(scores: readonly PartitionScore[]): GateDecision | undefined {
  const transient = scores.reduce((sum, score) => sum + score.transient, 0);
  if (transient === 0) return undefined;
  const total = scores.reduce((sum, score) => sum + score.total, 0);
  const messages = [
    ...new Set(
      scores.flatMap((score) =>
        score.examples.flatMap((record) => (!record.valid && record.transient === true ? [record.message] : [])),
      ),
    ),
  ].slice(0, 3);
  return {
    accepted: false,
    reason: 'evaluation_failed',
    shadowConsulted: false,
    checks: [
      {
        name: 'evaluation',
        passed: false,
        statistic: transient,
        threshold: 0,
        detail: `${transient} of ${total} example-repeats failed in the infrastructure after the retries (not an outcome of the artifact; not stored, so a later evaluation tries them again): ${messages.join('; ')}`,
        data: { transient, total, messages },
      },
    ],
  };
}

/** One partition as the gate compared it. */
export interface PartitionComparison {
  /** Composites (mean over valid example-repeats); null when nothing was valid. */
  incumbent: number | null;
  candidate: number | null;
  /** Example-repeats evaluated for the candidate (valid or not). */
  evaluated: number;
  /** Per-example mean composites of the examples valid for both, by id, and the ids left out (invalid on a side). */
  examples: { ids: string[]; incumbent: number[]; candidate: number[]; leftOut: string[] };
}

/** The scores the gate compared, per partition, for the notebook and the viewer. */
export interface DecisionScores {
  optimization: PartitionComparison;
  anchor: PartitionComparison;
  /** Present when the gate consulted the shadow. */
  shadow?: PartitionComparison;
  /** Tokens and cost of the candidate's evaluations (as first computed; 0 when every result was stored already). */
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  repeats: { candidate: number; incumbent: number };
}

const round6 = (value: number): number => Math.round(value * 1e6) / 1e6;

function comparison(incumbent: PartitionScore, candidate: PartitionScore): PartitionComparison {
  const paired = comparePaired(incumbent, candidate);
  return {
    incumbent: incumbent.composite,
    candidate: candidate.composite,
    evaluated: candidate.total,
    examples: {
      ids: paired.ids,
      incumbent: paired.incumbent.map(round6),
      candidate: paired.candidate.map(round6),
      leftOut: paired.leftOut,
    },
  };
}

/** Gates one candidate against the incumbent; the shadow is evaluated only when every earlier check passed. */
/** What {@link gateCandidate} gates: the candidate's scores, the incumbent, the gate's settings. */
export interface GateCandidateInput {
  evaluator: Evaluator;
  study: LoadedStudy;
  incumbent: ArtifactVersion;
  incumbentRepeats: number;
  text: string;
  optimization: PartitionScore;
  anchor: PartitionScore;
  calibration: GateCalibration;
  /** The gate's levels for this decision (a re-trial's, src/loop/retrials.ts); default `study.gate`. */
  settings?: Readonly<GateSettings>;
  signal?: AbortSignal;
  /** Race the candidate's shadow (`gate.racing`), with the plan's seed. */
  racing?: { settings: RacingSettings; seed: number };
  /** The look of early acceptance the optimization partition is judged at (src/gate/sequential.ts); default: `alpha`, as without it. */
  sequential?: SequentialJudgement;
}

export async function gateCandidate(
  input: GateCandidateInput,
): Promise<{ decision: GateDecision; scores: DecisionScores; incumbentScores: PartitionScore[] }> {
  const { evaluator, study, incumbent, signal } = input;
  const incumbentOn = (partition: 'optimization' | 'anchor' | 'shadow') =>
    withCallStage('incumbent', () =>
      evaluateIncumbentPartition(evaluator, study, input.calibration, {
        text: incumbent.text,
        partition,
        repeats: input.incumbentRepeats,
        signal,
      }),
    );
  const incumbentOptimization = await incumbentOn('optimization');
  const incumbentAnchor = await incumbentOn('anchor');
  let shadowPair: ShadowPair | undefined;
  const decision = await decide(
    {
      constraints: study.constraints.check(incumbent.text, input.text),
      optimization: { incumbent: incumbentOptimization, candidate: input.optimization },
      anchor: { incumbent: incumbentAnchor, candidate: input.anchor },
      evaluateShadow: ({ optimizationDelta }) =>
        withCallStage('shadow', async () => {
          shadowPair = await evaluateShadowPair(input, optimizationDelta);
          return shadowPair;
        }),
      calibration: input.calibration,
      stochastic: !study.executor.deterministic,
      outcome: study.task.outcome ?? 'continuous',
      ...(input.sequential !== undefined ? { sequential: input.sequential } : {}),
    },
    input.settings ?? study.gate,
  );
  const usage = [input.optimization, input.anchor, ...(shadowPair !== undefined ? [shadowPair.candidate] : [])].reduce(
    (sum, score) => ({
      inputTokens: sum.inputTokens + score.usage.inputTokens,
      outputTokens: sum.outputTokens + score.usage.outputTokens,
      costUsd: sum.costUsd + score.usage.costUsd,
    }),
    { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  );
  return {
    decision,
    scores: {
      optimization: comparison(incumbentOptimization, input.optimization),
      anchor: comparison(incumbentAnchor, input.anchor),
      ...(shadowPair !== undefined ? { shadow: comparison(shadowPair.incumbent, shadowPair.candidate) } : {}),
      usage,
      repeats: { candidate: input.optimization.repeats, incumbent: incumbentOptimization.repeats },
    },
    incumbentScores: [
      incumbentOptimization,
      incumbentAnchor,
      ...(shadowPair !== undefined ? [shadowPair.incumbent] : []),
    ],
  };
}

/**
 * The shadow of a gated candidate and of the incumbent: in full, or — with
 * `input.racing` — the candidate's in batches, stopped for futility when it
 * can no longer confirm the gain (`stoppedEarly`).
 */
async function evaluateShadowPair(input: GateCandidateInput, optimizationDelta: number): Promise<ShadowPair> {
  const { evaluator, study, incumbent, signal } = input;

  const incumbentShadow = await withCallStage('incumbent', () =>
    evaluateIncumbentPartition(evaluator, study, input.calibration, {
      text: incumbent.text,
      partition: 'shadow',
      repeats: input.incumbentRepeats,
      signal,
    }),
  );
  if (input.racing !== undefined) {
    // The candidate's shadow in batches: stopped for futility when it can no longer confirm the gain.
    const shadowIds = study.partitions.shadow.map((example) => example.id);
    const records: ExampleScoreRecord[] = [];
    const outcome = await raceShadow({
      plan: planRace({
        exampleIds: shadowIds,
        repeats: study.gate.repeats,
        batchSize: input.racing.settings.batchSize,
        seed: input.racing.seed,
      }),
      settings: input.racing.settings,
      incumbent: incumbentShadow,
      context: shadowFutilityContext({
        calibration: input.calibration,
        shadowIds,
        optimizationExamples: study.partitions.optimization.length,
        optimizationDelta,
        settings: input.settings ?? study.gate,
        candidateRepeats: study.gate.repeats,
        incumbentRepeats: incumbentShadow.repeats,
        stochastic: !study.executor.deterministic,
      }),
      evaluateBatch: async (slots) => {
        const batch = await evaluateSlots(evaluator, study, input.text, 'shadow', slots, signal);
        records.push(...batch);
        return batch;
      },
    });
    if (outcome.stop === 'futility') {
      return {
        incumbent: incumbentShadow,
        candidate: partialScore(evaluator, 'shadow', input.text, records),
        stoppedEarly: shadowStop(outcome.evidence),
      };
    }
  }
  return {
    incumbent: incumbentShadow,
    candidate: await evaluatePartition(evaluator, study, input.text, 'shadow', signal),
  };
}
