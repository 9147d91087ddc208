/**
 * Can any change reach significance? Checked before a run, so a study too
 * small for its gate is told so with the number of examples it would need
 * (issue 12: "a study too small for any change to reach significance is told
 * so before the run").
 *
 * - **Binary tasks** (every example right or wrong; the gate's paired test is
 *   McNemar's exact test, one-sided): the best a candidate can do is fix
 *   every example the incumbent gets wrong and break none, giving
 *   p = 0.5^w for w wrong examples (McNemar 1947, exact binomial form). When
 *   0.5^w > α no change can pass, whatever it does: the study needs at least
 *   k* = ⌈log₂(1/α)⌉ examples the incumbent gets wrong (5 at α = 0.05,
 *   p = 0.031). Checked on optimization (α = `gate.alpha`) and on the shadow
 *   (`gate.shadowAlpha`), the incumbent's outcomes as evaluated.
 * - **Continuous tasks** (the paired t-test): with the observed effect sizes
 *   of earlier refused candidates (d_z of their paired differences, read from
 *   the notebook), the examples the median one would need
 *   (`requiredExamples`, src/report/stuck-advice.ts); and the power of the
 *   shadow's one test for the optimization gains of the decisions that
 *   reached it (below {@link SHADOW_POWER_TARGET}: the shadow examples that
 *   would reach it); nothing to say before any candidate was measured.
 *
 * @module
 */
import type { PartitionName } from '../corpus/example.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import { perExampleMeans } from '../evaluator/partition-score.ts';
import { evaluatePartition } from '../loop/evaluate-partition.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import {
  listDecidedExperimentEvidence,
  listNotSignificantRefusals,
} from '../storage/notebook/calibration-power-store.ts';
import type { OutcomeKind } from '../tasks/task.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { requiredExamples, significanceShortfall } from '../report/stuck-advice.ts';
import { mcnemarMinimumPairs } from '../stats/mcnemar.ts';
import { normalQuantile } from '../stats/index.ts';
import { normalCdf } from '../stats/distributions.ts';

/** One warning: the partition, what it has, what it needs, in words. */
export interface PowerWarning {
  partition: 'optimization' | 'shadow';
  /** Examples the incumbent gets wrong (binary), or examples in the partition (continuous). */
  have: number;
  /** The least number needed for a change to be able to pass. */
  needed: number;
  message: string;
}

/** The least number of discordant pairs, all in the candidate's favour, at which McNemar's exact one-sided test reaches α: ⌈log₂(1/α)⌉. */
export function minimumFixesForMcNemar(alpha: number): number {
  return mcnemarMinimumPairs(alpha);
}

/** What {@link powerWarnings} reads. */
export interface PowerCheckInput {
  outcome: OutcomeKind;
  alpha: number;
  shadowAlpha: number;
  /** The incumbent's per-example mean composite on each partition (example id → value in [0, 1]); invalid examples absent. */
  optimization: ReadonlyMap<string, number>;
  shadow: ReadonlyMap<string, number>;
  /** Examples in each partition (invalid ones included). */
  optimizationSize: number;
  shadowSize: number;
  /** d_z of earlier refused candidates' paired differences on optimization (continuous tasks), if any. */
  observedEffectSizes?: readonly number[];
  /**
   * Of earlier decisions that reached the shadow (continuous tasks): the
   * optimization gain Δopt each had to confirm and the shadow test's standard
   * error (the `power` evidence of the gate's shadow check).
   */
  shadowEvidence?: ReadonlyArray<{ optimizationDelta: number; standardError: number }>;
}

/** The power the shadow's test should have for the optimization gains a study shows; below it `kloop doctor` warns. */
export const SHADOW_POWER_TARGET = 0.8;

/**
 * The warnings for a study about to run; empty when a change can pass.
 *
 * @example
 * ```ts
 * powerWarnings({ outcome: 'binary', alpha: 0.05, shadowAlpha: 0.05, optimization, shadow, optimizationSize: 6, shadowSize: 3 });
 * // [{ partition: 'optimization', have: 2, needed: 5, message: 'no change can reach significance on optimization: …' }, …]
 * ```
 */
export function powerWarnings(input: PowerCheckInput): PowerWarning[] {
  const warnings: PowerWarning[] = [];
  if (input.outcome === 'binary') {
    for (const [partition, scores, size, alpha] of [
      ['optimization', input.optimization, input.optimizationSize, input.alpha],
      ['shadow', input.shadow, input.shadowSize, input.shadowAlpha],
    ] as const) {
      const right = [...scores.values()].filter((value) => value === 1).length;
      const wrong = size - right;
      const needed = minimumFixesForMcNemar(alpha);
      if (wrong >= needed) continue;
      warnings.push({
        partition,
        have: wrong,
        needed,
        message:
          `no change can reach significance on ${partition}: the incumbent gets ${wrong} of its ${size} examples wrong, and McNemar's exact test needs at least ${needed} fixed with none broken ` +
          `(p = 0.5^${needed} = ${(0.5 ** needed).toFixed(3)} ≤ α = ${alpha}); add at least ${needed - wrong} ${partition} example(s) the incumbent gets wrong`,
      });
    }
    return warnings;
  }
  const shadowWarning = shadowPowerWarning(input);
  if (shadowWarning !== null) warnings.push(shadowWarning);
  const effects = (input.observedEffectSizes ?? [])
    .filter((value) => Number.isFinite(value) && value > 0)
    .sort((left, right) => left - right);
  if (effects.length === 0) return warnings;
  const median = effects[Math.floor((effects.length - 1) / 2)]!;
  const needed = requiredExamples(median, input.alpha);
  if (needed === null || needed <= input.optimizationSize) return warnings;
  warnings.unshift({
    partition: 'optimization',
    have: input.optimizationSize,
    needed,
    message: `at the effect sizes measured so far (median d_z = ${median.toFixed(3)} over ${effects.length} refused candidate(s)), a change needs about ${needed} optimization examples to reach α = ${input.alpha}; the partition has ${input.optimizationSize}`,
  });
  return warnings;
}

/**
 * The shadow half of the continuous check: the power of the gate's one
 * shadow test (src/gate/shadow-check.ts) for the optimization gains of the
 * decisions that reached the shadow, at their median ratio r = Δopt/SE:
 * 1 − Φ(z₁₋α − r) (normal approximation, Cohen 1988). Below
 * {@link SHADOW_POWER_TARGET}, the shadow examples that would reach it, the
 * SE shrinking as 1/√n: n·((z₁₋α + z_target)/r)². Null when nothing was
 * measured or the power is enough.
 */
function shadowPowerWarning(input: PowerCheckInput): PowerWarning | null {
  const ratios = (input.shadowEvidence ?? [])
    .filter((entry) => entry.optimizationDelta > 0 && entry.standardError > 0)
    .map((entry) => entry.optimizationDelta / entry.standardError)
    .sort((left, right) => left - right);
  if (ratios.length === 0) return null;
  const ratio = ratios[Math.floor((ratios.length - 1) / 2)]!;
  const critical = normalQuantile(1 - input.shadowAlpha);
  const power = 1 - normalCdf(critical - ratio, 0, 1);
  if (power >= SHADOW_POWER_TARGET) return null;
  const needed = Math.ceil(input.shadowSize * ((critical + normalQuantile(SHADOW_POWER_TARGET)) / ratio) ** 2);
  return {
    partition: 'shadow',
    have: input.shadowSize,
    needed,
    message:
      `the shadow's test has power ${power.toFixed(2)} (median over ${ratios.length} decision(s) that reached it) to confirm the optimization gains measured so far at shadowAlpha = ${input.shadowAlpha}; ` +
      `about ${needed} shadow examples would give ${SHADOW_POWER_TARGET}, the partition has ${input.shadowSize}: real gains will often be refused not_confirmed`,
  };
}

/** What {@link studyPowerWarnings} reads. */
export interface StudyPowerInput {
  study: LoadedStudy;
  /** The evaluator the incumbent is measured with (the run's stored one, so the loop reuses the results; or one without a database, for `kloop doctor`). */
  evaluator: Evaluator;
  /** The text of the incumbent (the active version, or the seed artifact on a new study). */
  incumbentText: string;
  /** The notebook, read for the effect sizes of earlier refused candidates (continuous tasks); absent = none measured. */
  db?: StudyDatabase;
  signal?: AbortSignal;
}

/**
 * The power check of a study about to run ({@link powerWarnings}) with what it
 * reads gathered: for a binary task, the incumbent evaluated on the
 * optimization and shadow partitions (`gate.repeats` repeats; when repeats
 * make the per-example outcomes means rather than 0/1, the gate falls back to
 * the paired t-test and so does this check); for a continuous task, d_z of
 * every candidate the notebook holds refused as `not_significant` (from its
 * paired t-test: d_z = t/√n), with no evaluation at all.
 *
 * @returns the warnings, empty when a change can pass (or nothing can be said yet)
 * @throws what the evaluator throws (an abort, an infrastructure failure)
 */
export async function studyPowerWarnings(input: StudyPowerInput): Promise<PowerWarning[]> {
  const { study } = input;
  const sizes = { optimizationSize: study.partitions.optimization.length, shadowSize: study.partitions.shadow.length };
  const settings = { alpha: study.gate.alpha, shadowAlpha: study.gate.shadowAlpha };
  if (study.task.outcome === 'binary') {
    const outcomes = {} as Record<Exclude<PartitionName, 'anchor'>, Map<string, number>>;
    for (const partition of ['optimization', 'shadow'] as const) {
      outcomes[partition] = perExampleMeans(
        await evaluatePartition(input.evaluator, study, input.incumbentText, partition, input.signal),
      );
    }
    const binary = [...outcomes.optimization.values(), ...outcomes.shadow.values()].every(
      (value) => value === 0 || value === 1,
    );
    if (binary) return powerWarnings({ outcome: 'binary', ...settings, ...sizes, ...outcomes });
  }
  return input.db === undefined ? [] : notebookPowerWarnings(input.db, { ...settings, ...sizes });
}

/**
 * The continuous-task half of {@link studyPowerWarnings}, from the notebook
 * alone (nothing evaluated): the examples the median refused candidate's
 * effect size would need on optimization.
 */
export async function notebookPowerWarnings(
  db: StudyDatabase,
  settings: { alpha: number; shadowAlpha: number; optimizationSize: number; shadowSize: number },
): Promise<PowerWarning[]> {
  const observedEffectSizes = await refusedEffectSizes(db, settings.alpha);
  const shadowEvidence = await shadowTestEvidence(db);
  return powerWarnings({
    outcome: 'continuous',
    ...settings,
    optimization: new Map(),
    shadow: new Map(),
    observedEffectSizes,
    shadowEvidence,
  });
}

/** Δopt and the shadow test's SE of every decision whose shadow check recorded its power (src/gate/shadow-check.ts). */
async function shadowTestEvidence(
  db: StudyDatabase,
): Promise<Array<{ optimizationDelta: number; standardError: number }>> {
  const evidences = await listDecidedExperimentEvidence(db);
  const entries: Array<{ optimizationDelta: number; standardError: number }> = [];
  for (const evidence of evidences) {
    try {
      const checks =
        (
          JSON.parse(evidence) as {
            checks?: Array<{ name?: string; statistic?: unknown; data?: { power?: { standardError?: unknown } } }>;
          }
        ).checks ?? [];
      const se = checks.find((check) => check.name === 'shadow')?.data?.power?.standardError;
      const delta = checks.find((check) => check.name === 'margin')?.statistic;
      if (typeof se === 'number' && typeof delta === 'number')
        entries.push({ optimizationDelta: delta, standardError: se });
    } catch {}
  }
  return entries;
}

/** d_z of the candidates the notebook refused as not significant by the paired t-test (McNemar refusals left out). */
async function refusedEffectSizes(db: StudyDatabase, alpha: number): Promise<number[]> {
  const rows = await listNotSignificantRefusals(db);
  const sizes: number[] = [];
  for (const row of rows) {
    let evidence: unknown = null;
    try {
      evidence = JSON.parse(row.evidence);
    } catch {
      continue;
    }
    const shortfall = significanceShortfall({ id: row.id, reason: row.reason, evidence }, alpha);
    if (shortfall !== undefined && shortfall.test !== 'mcnemar-exact') sizes.push(shortfall.effectSize);
  }
  return sizes;
}
