/**
 * Rounds of simulated candidates decided with full evaluation or raced
 * (`src/gate/racing/`), on the same draws, counting the candidates'
 * example-repeats evaluated (optimization, anchor, shadow) — what
 * `bench/gate-bench.ts` compares.
 *
 * A candidate is a *change* of known true effect per partition relative to
 * the incumbent (a gain of 2σ everywhere, an overfit: 2σ on optimization
 * only, ...). Its evaluation is drawn once, in full, before the round (common
 * random numbers: both modes see the same draws); racing reveals it batch by
 * batch. After an acceptance the remaining candidates are *rebased*: drawn
 * afresh against the new incumbent (true quality = the new incumbent's + the
 * change), as the loop re-evaluates a rebased candidate.
 *
 * Full evaluation screens every candidate on optimization and anchor, then
 * integrates them best first (optimization composite), as `kloop run` does
 * without racing. The shadow is counted when the gate consulted it.
 */
import type { GateCalibration, GateDecision, GateSettings } from '../../gate/gate.ts';
import { DEFAULT_GATE_SETTINGS, decide } from '../../gate/gate.ts';
import { perExampleMeans } from '../../evaluator/partition-score.ts';
import { optimizationLook } from '../../gate/sequential.ts';
import {
  createRace,
  DEFAULT_EARLY_TEST,
  planRace,
  sequentialJudgementOf,
  raceShadow,
  runRace,
  shadowFutilityContext,
  shadowStop,
  slotKey,
  type RaceEvidence,
  type RacingSettings,
} from '../../gate/racing/index.ts';
import type { RandomSource } from '../../stats/index.ts';
import { firstRepeats } from './simulate-partition-score.ts';
import {
  decideSimulated,
  evaluateSimulatedArtifact,
  type GateScenario,
  type PartitionQualities,
  type SimulatedCorpus,
  type SimulatedEvaluation,
} from './gate-trial.ts';

/** A candidate's true effect on each partition, relative to the incumbent (composite units). */
export type SimulatedChange = PartitionQualities;

/** An incumbent with its true qualities. */
export interface SimulatedIncumbent {
  qualities: PartitionQualities;
  evaluation: SimulatedEvaluation;
}

/** One decision of a simulated round. */
export interface SimulatedRoundDecision {
  /** The candidate's index in the round. */
  index: number;
  accepted: boolean;
  /** `accepted` or the refusal reason. */
  reason: string;
  /** `futility`: stopped early; `complete`: raced in full; `early`: accepted early on optimization (then gated); `full`: full evaluation (racing off). */
  stop: 'futility' | 'complete' | 'early' | 'full';
  /** Example-repeats of this candidate evaluated for this decision (optimization, anchor, shadow). */
  evaluations: number;
  /** The race evidence (racing only). */
  race?: RaceEvidence;
}

/** A simulated round's outcome. */
export interface SimulatedRoundOutcome {
  decisions: SimulatedRoundDecision[];
  /** Every candidate example-repeat evaluated in the round, rebased re-evaluations included. */
  evaluations: number;
  /** Evaluations spent until candidate `watch` was accepted (null when it was not). */
  evaluationsUntilWatched: number | null;
  /** The incumbent at the end of the round. */
  incumbent: SimulatedIncumbent;
}

/** The inputs of a simulated round. */
export interface SimulatedRoundInput {
  scenario: GateScenario;
  corpus: SimulatedCorpus;
  calibration: GateCalibration;
  settings?: Readonly<GateSettings>;
  incumbent: SimulatedIncumbent;
  changes: readonly SimulatedChange[];
  /** The candidates' first evaluations, drawn before the round (same for both modes); index-aligned with `changes`. */
  evaluations: readonly SimulatedEvaluation[];
  /** Draws the rebased candidates' evaluations. */
  random: RandomSource;
  /** Racing settings; absent = full evaluation. */
  racing?: RacingSettings;
  /** Seed of the race plan. Default 1. */
  planSeed?: number;
  /** The candidate whose acceptance is watched: the evaluations spent until it is accepted are reported. */
  watch?: number;
}

/** Draws a candidate's evaluation: the incumbent's true qualities plus the change. */
export function drawCandidate(
  scenario: GateScenario,
  corpus: SimulatedCorpus,
  incumbent: PartitionQualities,
  change: SimulatedChange,
  random: RandomSource,
): SimulatedEvaluation {
  return evaluateSimulatedArtifact(
    scenario,
    corpus,
    {
      optimization: incumbent.optimization + change.optimization,
      anchor: incumbent.anchor + change.anchor,
      shadow: incumbent.shadow + change.shadow,
    },
    random,
  );
}

const partitionSize = (evaluation: SimulatedEvaluation, partition: 'optimization' | 'anchor' | 'shadow'): number =>
  evaluation[partition].total;

const plus = (left: PartitionQualities, right: PartitionQualities): PartitionQualities => ({
  optimization: left.optimization + right.optimization,
  anchor: left.anchor + right.anchor,
  shadow: left.shadow + right.shadow,
});

/** Runs one round (full evaluation, or raced when `input.racing` is set). */
export async function simulateRound(input: SimulatedRoundInput): Promise<SimulatedRoundOutcome> {
  return input.racing === undefined ? fullRound(input) : racedRound(input, input.racing);
}

async function fullRound(input: SimulatedRoundInput): Promise<SimulatedRoundOutcome> {
  const settings = input.settings ?? DEFAULT_GATE_SETTINGS;
  let incumbent = input.incumbent;
  let spent = 0;
  let watched: number | null = null;
  const decisions: SimulatedRoundDecision[] = [];
  const screened = input.evaluations.map((evaluation, index) => ({ index, evaluation }));
  for (const item of screened)
    spent += partitionSize(item.evaluation, 'optimization') + partitionSize(item.evaluation, 'anchor');
  screened.sort(
    (left, right) =>
      (right.evaluation.optimization.composite ?? -1) - (left.evaluation.optimization.composite ?? -1) ||
      left.index - right.index,
  );
  const screenedAgainst = input.incumbent;
  for (const item of screened) {
    let evaluation = item.evaluation;
    let cost = partitionSize(evaluation, 'optimization') + partitionSize(evaluation, 'anchor');
    if (incumbent !== screenedAgainst) {
      // Rebased onto the new incumbent and evaluated again.
      evaluation = drawCandidate(
        input.scenario,
        input.corpus,
        incumbent.qualities,
        input.changes[item.index]!,
        input.random,
      );
      spent += cost;
    }
    const decision = await decideSimulated(incumbent.evaluation, evaluation, input.calibration, settings);
    if (decision.shadowConsulted) {
      spent += partitionSize(evaluation, 'shadow');
      cost += partitionSize(evaluation, 'shadow');
    }
    decisions.push({
      index: item.index,
      accepted: decision.accepted,
      reason: reasonOf(decision),
      stop: 'full',
      evaluations: cost,
    });
    if (decision.accepted) {
      incumbent = { qualities: plus(incumbent.qualities, input.changes[item.index]!), evaluation };
      if (item.index === input.watch) watched = spent;
    }
  }
  return { decisions, evaluations: spent, evaluationsUntilWatched: watched, incumbent };
}

interface RacedCandidate {
  key: string;
  index: number;
  evaluation: SimulatedEvaluation;
  spent: number;
}

/** The state of one raced round. */
interface RacedRound {
  input: SimulatedRoundInput;
  racing: RacingSettings;
  settings: GateSettings;
  incumbent: SimulatedIncumbent;
  spent: number;
  watched: number | null;
  generation: number;
  decisions: SimulatedRoundDecision[];
  exampleIds: string[];
  plan: ReturnType<typeof planRace>;
}

async function racedRound(input: SimulatedRoundInput, racing: RacingSettings): Promise<SimulatedRoundOutcome> {
  const exampleIds = Object.keys(input.corpus.optimization);
  const round: RacedRound = {
    input,
    racing,
    settings: input.settings ?? DEFAULT_GATE_SETTINGS,
    incumbent: input.incumbent,
    spent: 0,
    watched: null,
    generation: 0,
    decisions: [],
    exampleIds,
    plan: planRace({
      exampleIds,
      repeats: input.scenario.repeats,
      batchSize: racing.batchSize,
      seed: input.planSeed ?? 1,
    }),
  };
  const candidates: RacedCandidate[] = input.evaluations.map((evaluation, index) => ({
    key: `${index}#0`,
    index,
    evaluation,
    spent: 0,
  }));
  await runRace(candidates, {
    start: (pool) => startRace(round, pool),
    evaluateBatch: async (candidate, slots) => {
      round.spent += slots.length;
      candidate.spent += slots.length;
      const wanted = new Set(slots.map(slotKey));
      return candidate.evaluation.optimization.examples.filter((record) => wanted.has(slotKey(record)));
    },
    onFutile: async (candidate, evidence) => {
      round.decisions.push({
        index: candidate.index,
        accepted: false,
        reason: 'futility',
        stop: 'futility',
        evaluations: candidate.spent,
        race: evidence,
      });
      return true;
    },
    onComplete: (candidate, evidence) => completeCandidate(round, candidate, evidence),
    look: async (candidate, request) => {
      const look = optimizationLook(
        {
          optimization: {
            incumbent: round.incumbent.evaluation.optimization,
            candidate: firstRepeats(candidate.evaluation.optimization, request.repeats),
          },
          calibration: input.calibration,
          stochastic: true,
        },
        round.settings,
        { level: request.level, test: racing.earlyTest ?? DEFAULT_EARLY_TEST },
      );
      return { passed: look.passed, pValue: look.pValue, delta: look.delta, margin: look.margin };
    },
    rebase: async (remaining) => rebaseCandidates(round, remaining),
  });
  return {
    decisions: round.decisions,
    evaluations: round.spent,
    evaluationsUntilWatched: round.watched,
    incumbent: round.incumbent,
  };
}

/** A race of these candidates against the incumbent as it stands now. */
function startRace(round: RacedRound, pool: readonly RacedCandidate[]): ReturnType<typeof createRace> {
  const { input, settings, incumbent } = round;
  const incumbentRepeats = incumbent.evaluation.optimization.repeats;
  const candidateRepeats = input.scenario.repeats;
  const margin =
    settings.thresholdK * input.calibration.noiseSd * Math.sqrt(1 / candidateRepeats + 1 / incumbentRepeats);
  return createRace({
    plan: round.plan,
    settings: round.racing,
    incumbentMeans: perExampleMeans(incumbent.evaluation.optimization),
    keys: pool.map((candidate) => candidate.key),
    context: {
      pairVarianceFloor: round.exampleIds.length * input.calibration.noiseSd ** 2,
      runNoiseSd: input.calibration.noiseSd,
      candidateRepeats,
      incumbentRepeats,
      margin,
      alpha: settings.alpha,
      stochastic: true,
    },
  });
}

/** The gate's decision on a complete candidate (anchor counted, shadow raced); an acceptance makes it the incumbent. */
async function completeCandidate(
  round: RacedRound,
  candidate: RacedCandidate,
  evidence: RaceEvidence,
): Promise<{ accepted: boolean; proceed: boolean }> {
  const { input } = round;
  const anchor = partitionSize(candidate.evaluation, 'anchor');
  round.spent += anchor;
  candidate.spent += anchor;
  const sequential = sequentialJudgementOf(evidence, round.settings.alpha);
  const decision = await decide(
    {
      constraints: { passed: true, violations: [] },
      optimization: {
        incumbent: round.incumbent.evaluation.optimization,
        candidate:
          evidence.stop === 'early'
            ? firstRepeats(candidate.evaluation.optimization, evidence.early!.looks.at(-1)!.repeats)
            : candidate.evaluation.optimization,
      },
      ...(sequential !== undefined ? { sequential } : {}),
      anchor: { incumbent: round.incumbent.evaluation.anchor, candidate: candidate.evaluation.anchor },
      evaluateShadow: ({ optimizationDelta }) => raceCandidateShadow(round, candidate, optimizationDelta),
      calibration: input.calibration,
      stochastic: true,
    },
    round.settings,
  );
  round.decisions.push({
    index: candidate.index,
    accepted: decision.accepted,
    reason: reasonOf(decision),
    stop: evidence.stop === 'early' ? 'early' : 'complete',
    evaluations: candidate.spent,
    race: evidence,
  });
  if (decision.accepted) {
    round.incumbent = {
      qualities: plus(round.incumbent.qualities, input.changes[candidate.index]!),
      evaluation: candidate.evaluation,
    };
    if (candidate.index === input.watch) round.watched = round.spent;
  }
  return { accepted: decision.accepted, proceed: true };
}

/** The candidate's shadow raced: revealed batch by batch, stopped for futility when it cannot confirm. */
async function raceCandidateShadow(round: RacedRound, candidate: RacedCandidate, optimizationDelta: number) {
  const { input, racing, settings, incumbent } = round;
  const shadowIds = Object.keys(input.corpus.shadow);
  const outcome = await raceShadow({
    plan: planRace({
      exampleIds: shadowIds,
      repeats: input.scenario.repeats,
      batchSize: racing.batchSize,
      seed: (input.planSeed ?? 1) ^ 0x5bd1e995,
    }),
    settings: racing,
    incumbent: incumbent.evaluation.shadow,
    context: shadowFutilityContext({
      calibration: input.calibration,
      shadowIds,
      optimizationExamples: round.exampleIds.length,
      optimizationDelta,
      settings,
      candidateRepeats: input.scenario.repeats,
      incumbentRepeats: incumbent.evaluation.shadow.repeats,
      stochastic: true,
    }),
    evaluateBatch: async (slots) => {
      round.spent += slots.length;
      candidate.spent += slots.length;
      const wanted = new Set(slots.map(slotKey));
      return candidate.evaluation.shadow.examples.filter((record) => wanted.has(slotKey(record)));
    },
  });
  const pair = { incumbent: incumbent.evaluation.shadow, candidate: candidate.evaluation.shadow };
  return outcome.stop === 'futility' ? { ...pair, stoppedEarly: shadowStop(outcome.evidence) } : pair;
}

/** The candidates still racing, drawn afresh against the new incumbent, under new keys. */
function rebaseCandidates(round: RacedRound, remaining: readonly RacedCandidate[]): RacedCandidate[] {
  round.generation += 1;
  return remaining.map((candidate) => ({
    key: `${candidate.index}#${round.generation}`,
    index: candidate.index,
    evaluation: drawCandidate(
      round.input.scenario,
      round.input.corpus,
      round.incumbent.qualities,
      round.input.changes[candidate.index]!,
      round.input.random,
    ),
    spent: 0,
  }));
}

function reasonOf(decision: GateDecision): string {
  return decision.accepted ? 'accepted' : decision.reason;
}
