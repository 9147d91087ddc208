/**
 * The shadow, raced: once a candidate has passed every optimization and
 * anchor check, the gate consults the shadow partition; with racing, the
 * candidate's shadow example-repeats are evaluated in batches too (the
 * incumbent's in full, as it is reused by every later decision), and the
 * evaluation stops for futility when the shadow can no longer be expected to
 * confirm the gain — the check is then refused as `specialization`, exactly
 * the refusal the full shadow would most likely have given. It never
 * confirms early: a shadow that is not stopped is evaluated in full and the
 * gate's shadow check decides as without racing.
 *
 * The shadow must show Δshadow > 0, Δshadow ≥ γ·Δopt − m and pass its own
 * tests at `shadowAlpha`; the futility rule (`futility.ts`) is applied with
 * the least of what that requires: c = max(0, γ·Δopt − m̄, the tests'
 * critical gains), with m̄ an upper estimate of the margin m (so c errs low),
 * and the pair variance floor of the optimization partition (n_opt · σ²,
 * which bounds the shadow's from above when the shadow is the smaller
 * partition).
 *
 * @module
 */
import type { PartitionScore } from '../../evaluator/partition-score.ts';
import { perExampleMeans } from '../../evaluator/partition-score.ts';
import type { ExampleScoreRecord } from '../../evaluator/partition-score.ts';
import type { GateCalibration, GateSettings } from '../gate.ts';
import { describeRace } from './decide-raced.ts';
import type { FutilityContext, RacingSettings } from './futility.ts';
import type { RaceEvidence } from './race.ts';
import { createRace, nextBatch, observe, raceEvidence, verdicts } from './race.ts';
import type { RacePlan, RaceSlot } from './race-plan.ts';

/** What the futility rule needs to know of the shadow check. */
export function shadowFutilityContext(input: {
  calibration: GateCalibration;
  shadowIds: readonly string[];
  /** n of the optimization partition. */
  optimizationExamples: number;
  /** Δoptimization of the decision. */
  optimizationDelta: number;
  settings: Readonly<GateSettings>;
  candidateRepeats: number;
  incumbentRepeats: number;
  stochastic: boolean;
}): FutilityContext {
  const shadowCount = Math.max(1, input.shadowIds.length);
  const pairVarianceFloor = input.optimizationExamples * input.calibration.noiseSd ** 2;
  // The shadow's run-to-run SD from its examples' own SDs: the part of the noise that is not shared (a lower estimate).
  const exampleVariance =
    input.shadowIds.reduce((sum, id) => sum + (input.calibration.exampleSds[id] ?? 0) ** 2, 0) / shadowCount;
  const runNoiseSd = Math.sqrt(exampleVariance / shadowCount);
  const marginUpper =
    input.settings.shadowMarginSe * Math.sqrt(Math.max(pairVarianceFloor, exampleVariance) / shadowCount);
  return {
    pairVarianceFloor,
    runNoiseSd,
    candidateRepeats: input.candidateRepeats,
    incumbentRepeats: input.incumbentRepeats,
    margin: Math.max(1e-9, input.settings.generalizationRatio * input.optimizationDelta - marginUpper),
    alpha: input.settings.shadowAlpha,
    stochastic: input.stochastic,
  };
}

/** The outcome of a raced shadow. */
export type ShadowRaceOutcome =
  | { stop: 'complete'; evidence: RaceEvidence }
  | { stop: 'futility'; evidence: RaceEvidence };

/**
 * Races the candidate's shadow against the incumbent's (evaluated in full):
 * batch by batch until the plan is complete or the futility rule stops it.
 */
export async function raceShadow(input: {
  plan: RacePlan;
  settings: RacingSettings;
  incumbent: PartitionScore;
  context: FutilityContext;
  evaluateBatch(
    slots: readonly RaceSlot[],
  ): Promise<
    ReadonlyArray<Pick<ExampleScoreRecord, 'exampleId' | 'repeat' | 'valid'> & { composite?: number; transient?: true }>
  >;
}): Promise<ShadowRaceOutcome> {
  const race = createRace({
    plan: input.plan,
    context: input.context,
    settings: input.settings,
    incumbentMeans: perExampleMeans(input.incumbent),
    keys: ['shadow'],
  });
  for (;;) {
    const due = nextBatch(race);
    if (due === null) return { stop: 'complete', evidence: raceEvidence(race, 'shadow', 'complete') };
    observe(race, 'shadow', await input.evaluateBatch(input.plan.batches[due.batch]!));
    const step = verdicts(race);
    if (step.futile.length > 0) return { stop: 'futility', evidence: raceEvidence(race, 'shadow', 'futility') };
    if (step.complete.length > 0) return { stop: 'complete', evidence: raceEvidence(race, 'shadow', 'complete') };
  }
}

/** What the gate's shadow check shows for a shadow stopped for futility. */
export function shadowStop(evidence: RaceEvidence): {
  statistic: number;
  threshold: number;
  detail: string;
  data: Record<string, unknown>;
} {
  const byBound = evidence.rule === 'bound';
  return {
    statistic: byBound ? evidence.bound.upper : evidence.predictivePower,
    threshold: byBound ? evidence.margin : evidence.futilityLevel,
    detail: `the shadow ${describeRace(evidence).replace(/^stopped/, 'was stopped')}`,
    data: { racing: evidence },
  };
}
