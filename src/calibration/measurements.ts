/**
 * The calibration's measurements (src/calibration/calibration.ts), pure: the
 * run-to-run noise of repeated evaluations, the rolling-maximum threshold τ,
 * and the signal's effect size (Cohen's d) between two artifacts.
 *
 * @module
 */
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { comparePaired } from '../gate/gate.ts';
import { cohensD, standardDeviation } from '../stats/index.ts';

/** Noise of one set of repeated evaluations of one artifact. */
export interface NoiseMeasurement {
  /** Partition → SD of the run-level composites (absent: fewer than 2 valid runs). */
  partitionSds: Record<string, number>;
  /** Example id → SD of its composite across repeats (absent: fewer than 2 valid repeats). */
  exampleSds: Record<string, number>;
}

/**
 * Sample SD (n − 1) that is exactly 0 for a constant sample (the two-pass
 * formula can leave a 1e-17 residue when the mean is not representable).
 * NaN for fewer than 2 values.
 */
export function runToRunSd(values: readonly number[]): number {
  if (values.length < 2) return Number.NaN;
  if (values.every((value) => value === values[0])) return 0;
  return standardDeviation(values);
}

/**
 * Measures run-to-run noise from repeated evaluations of one artifact (one
 * {@link PartitionScore} per partition, each with ≥ 2 repeats).
 */
export function measureNoise(scores: readonly PartitionScore[]): NoiseMeasurement {
  const partitionSds: Record<string, number> = {};
  const exampleSds: Record<string, number> = {};
  for (const score of scores) {
    const runs = score.runComposites.filter((value): value is number => value !== null);
    const sd = runToRunSd(runs);
    if (Number.isFinite(sd)) partitionSds[score.partition] = sd;
    const byExample = new Map<string, number[]>();
    for (const record of score.examples) {
      if (!record.valid) continue;
      const values = byExample.get(record.exampleId) ?? [];
      values.push(record.composite);
      byExample.set(record.exampleId, values);
    }
    for (const [id, values] of byExample) {
      const exampleSd = runToRunSd(values);
      if (Number.isFinite(exampleSd)) exampleSds[id] = exampleSd;
    }
  }
  return { partitionSds, exampleSds };
}

/**
 * τ = k × max(noise SDs) — the rolling-maximum threshold. `noiseSds` are the
 * SDs of the window (this calibration and up to W − 1 earlier valid ones).
 *
 * @throws RangeError when `noiseSds` is empty or k < 0
 */
export function rollingThreshold(thresholdK: number, noiseSds: readonly number[]): number {
  if (noiseSds.length === 0) throw new RangeError('the rolling threshold needs at least one noise SD');
  if (!(thresholdK >= 0)) throw new RangeError(`thresholdK must be ≥ 0, got ${thresholdK}`);
  return thresholdK * Math.max(...noiseSds);
}

/**
 * Cohen's d between two artifacts on the per-example mean composites of the
 * examples valid for both (incumbent minus contrast). NaN when fewer than 2
 * examples are shared.
 */
export function signalEffectSize(
  incumbent: PartitionScore,
  contrast: PartitionScore,
): { cohensD: number; examples: number } {
  const paired = comparePaired(contrast, incumbent); // "candidate" = incumbent, so values line up by id
  if (paired.ids.length < 2) return { cohensD: Number.NaN, examples: paired.ids.length };
  return { cohensD: cohensD(paired.candidate, paired.incumbent), examples: paired.ids.length };
}
