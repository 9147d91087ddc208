/**
 * Re-trials: a refusal by a noisy test is not a verdict for ever.
 *
 * A candidate refused `not_significant`, `not_confirmed`, `futility` (the
 * race stopped it) or `anchor_regression` (an anchor's tolerance is a
 * multiple of its calibrated noise: one flip of a sampled answer can cross
 * it) lost to noise as often as to its own worth: a real gain
 * refused once by chance would otherwise be lost for good, since the
 * near-duplicate check skipped every later offer of it. Here, a delta is
 * judged again when it comes back, at most `gate.retrials` times (default
 * {@link DEFAULT_RETRIALS}): against a **changed incumbent** (the incumbent
 * it was judged on has since been replaced) with the configured repeats;
 * against the **same** incumbent with more of them — its evaluations are
 * stored, so the same repeats would replay the same numbers: a re-trial on
 * the incumbent it was judged on j times is evaluated with (j + 1) ×
 * `gate.repeats` repeats (the stored ones and as many fresh ones again,
 * `repeatsFactor`), outside the race. A delta whose earlier refusal was not
 * noisy (`specialization`, `constraint`, `below_margin`), one whose
 * near-duplicate was accepted, and one whose re-trials are spent is skipped
 * and recorded as a `duplicate`.
 *
 * A *family* is a delta and every judged delta within `gate.minDeltaDistance`
 * of it (bigram Jaccard distance), whatever incumbent it was judged on; its
 * *trials* are its judged experiments (skipped ones and failed evaluations
 * do not count).
 *
 * **The error budget.** Every judgement of a no-op is one more chance to
 * accept it by mistake, so re-trials are paid for: trial j ≥ 2 of a family
 * is judged at α/K on the optimization partition and at shadowAlpha/K on
 * the shadow, K = `gate.retrials` (Bonferroni over the K re-trials; Dunn
 * 1961; the split of a fixed error budget over looks of the same hypothesis
 * is Lan & DeMets' (1983) α-spending with equal spends). By the union bound,
 * the probability that a delta with no true effect is ever accepted over
 * all its 1 + K trials is at most
 *
 *   P(trial 1) + Σⱼ P(trial j) ≤ shadowAlpha + K · shadowAlpha/K = 2 · shadowAlpha,
 *
 * and, since the optimization and shadow tests run on disjoint examples
 * (independent given the artifact), at most α·shadowAlpha·(1 + 1/K) — with
 * the defaults 0.0025·1.5 = 0.375%. The first trial keeps the configured
 * levels (the gate's power for fresh ideas is unchanged); the re-trials
 * together spend at most one more α. A good candidate refused once by noise
 * still has a fair chance at α/K (src/loop/retrials.test.ts measures both by
 * seeded simulation).
 *
 * @module
 */
import type { GateSettings, RefusalReason } from '../gate/gate.ts';
import { DEFAULT_RETRIALS } from '../gate/gate-defaults.ts';

export { DEFAULT_RETRIALS };

/**
 * Refusals a re-trial may overturn: the noisy tests (Δ too small to tell
 * from chance, or stopped early for that reason), an anchor's drop past
 * its noise tolerance, and more invalid outputs than the incumbent (for a
 * sampled model, a count compared by a test at α: a model that breaks its
 * format now and then breaks it more often in one evaluation by chance). A re-trial keeps every check (anchors included) and
 * spends α/K on the tests, so a candidate that truly lowers an anchor is
 * refused again.
 */
export const RETRIABLE_REASONS: readonly RefusalReason[] = [
  'not_significant',
  'not_confirmed',
  'futility',
  'anchor_regression',
  'invalid',
];

/** One judged experiment, as the re-trial rule reads it. */
export interface JudgedExperiment {
  id: number;
  delta: string;
  /** The incumbent it was judged against. */
  baseVersionId: number;
  decision: 'accepted' | 'refused';
  reason: string;
}

/** What the re-trial rule says about a candidate whose family was judged before. */
export type RetrialVerdict =
  | { kind: 'fresh' }
  | {
      kind: 'retrial';
      trial: number;
      of: number;
      earlier: number[];
      /** On the incumbent it was judged on before: its repeats are `repeatsFactor` × `gate.repeats` (absent = 1). */
      repeatsFactor?: number;
    }
  | { kind: 'skip'; reason: string };

/**
 * The verdict for a candidate whose family (`family`: judged experiments
 * within `minDeltaDistance`, oldest first) is given, proposed against
 * `baseVersionId`, with `retrials` re-trials allowed. `options.deepen`
 * (default false; the loop sets it for a sampled executor) allows a re-trial
 * on the incumbent the family was judged on, with more repeats; without it
 * such a candidate is skipped (a deterministic executor would answer the
 * same again).
 */
export function retrialVerdict(
  family: readonly JudgedExperiment[],
  baseVersionId: number | undefined,
  retrials: number,
  options: { deepen?: boolean } = {},
): RetrialVerdict {
  if (family.length === 0) return { kind: 'fresh' };
  const ids = family.map((experiment) => `#${experiment.id}`).join(', ');
  const same = family.filter((experiment) => baseVersionId === undefined || experiment.baseVersionId === baseVersionId);
  const accepted = family.find((experiment) => experiment.decision === 'accepted');
  const final = family.find((experiment) => !RETRIABLE_REASONS.includes(experiment.reason as RefusalReason));
  const spent = family.length >= 1 + retrials;
  const deepen = options.deepen === true && baseVersionId !== undefined;
  if (same.length > 0 && (accepted !== undefined || final !== undefined || spent || !deepen)) {
    const last = same.at(-1)!;
    return {
      kind: 'skip',
      reason: `already judged on this incumbent (version ${last.baseVersionId}): experiment #${last.id}, ${last.decision === 'accepted' ? 'accepted' : `refused ${last.reason}`}${spent && accepted === undefined && final === undefined ? `; its re-trials are spent (judged ${family.length} times, gate.retrials ${retrials})` : ''}`,
    };
  }
  if (accepted !== undefined)
    return { kind: 'skip', reason: `a near-duplicate was accepted (experiment #${accepted.id})` };
  if (final !== undefined)
    return {
      kind: 'skip',
      reason: `a near-duplicate was refused ${final.reason} (experiment #${final.id}), a verdict a re-trial does not reopen (only ${RETRIABLE_REASONS.join(', ')} do)`,
    };
  if (spent)
    return {
      kind: 'skip',
      reason: `its re-trials are spent: judged ${family.length} times (${ids}), gate.retrials ${retrials}`,
    };
  return {
    kind: 'retrial',
    trial: family.length + 1,
    of: 1 + retrials,
    earlier: family.map((experiment) => experiment.id),
    ...(same.length > 0 ? { repeatsFactor: same.length + 1 } : {}),
  };
}

/**
 * The gate's levels for trial `trial` of a family (1 = its first judgement):
 * the configured ones for the first, α/K and shadowAlpha/K for a re-trial
 * (K = `retrials`; see the module comment), and for a re-trial on the same
 * incumbent `repeatsFactor` × `repeats`.
 */
export function retrialSettings<T extends GateSettings>(
  settings: Readonly<T>,
  trial: number,
  retrials: number,
  repeatsFactor = 1,
): Readonly<T> {
  if (trial <= 1 || retrials <= 0) return settings;
  const repeats = (settings as { repeats?: unknown }).repeats;
  return {
    ...settings,
    alpha: settings.alpha / retrials,
    shadowAlpha: settings.shadowAlpha / retrials,
    ...(repeatsFactor > 1 && typeof repeats === 'number' ? { repeats: repeats * repeatsFactor } : {}),
  };
}
