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
 *   (`requiredExamples`, src/study/stuck-advice.ts); nothing to say before any
 *   candidate was measured.
 *
 * @module
 */
import type { OutcomeKind } from '../tasks/task.ts';
import { mcnemarMinimumPairs } from '../stats/mcnemar.ts';
import { requiredExamples } from './stuck-advice.ts';

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
}

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
  const effects = (input.observedEffectSizes ?? []).filter((value) => Number.isFinite(value) && value > 0).sort((left, right) => left - right);
  if (effects.length === 0) return warnings;
  const median = effects[Math.floor((effects.length - 1) / 2)]!;
  const needed = requiredExamples(median, input.alpha);
  if (needed === null || needed <= input.optimizationSize) return warnings;
  warnings.push({
    partition: 'optimization',
    have: input.optimizationSize,
    needed,
    message: `at the effect sizes measured so far (median d_z = ${median.toFixed(3)} over ${effects.length} refused candidate(s)), a change needs about ${needed} optimization examples to reach α = ${input.alpha}; the partition has ${input.optimizationSize}`,
  });
  return warnings;
}
