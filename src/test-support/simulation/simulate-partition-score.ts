/**
 * A stochastic simulation task: artifacts with a **known true quality** whose
 * evaluations carry seeded noise of a chosen size, shaped as real
 * {@link PartitionScore}s so the real gate (`decide`) can be driven with them.
 *
 * Model (composite units, the [0, 1] scale of the intent composite). The
 * composite of example i in run r of an artifact of true quality q is
 *
 *     composite(i, r) = q + effect(i) + runNoise(r) + exampleNoise(i, r)
 *
 * - `effect(i)`: the example's fixed difficulty offset (same for every
 *   artifact, so paired comparisons cancel it);
 * - `runNoise(r)` ~ N(0, perRunNoiseSd²): shared by every example of one run
 *   (a provider drift, a sampling-temperature mood), fresh per run;
 * - `exampleNoise(i, r)` ~ N(0, perExampleNoiseSd²): independent per example
 *   and run (LLM sampling).
 *
 * The run-level composite of a partition of n examples therefore has the
 * run-to-run SD σ = √(perRunNoiseSd² + perExampleNoiseSd² / n) — the quantity
 * calibration measures ({@link runLevelNoiseSd}).
 *
 * **Noise-free examples** (`noiseFreeIds`, a temperature-0 model that always
 * answers them alike): composite(i, r) = q + effect(i), neither noise term;
 * with `slip` = { probability p, size s }, a rare different answer: each
 * draw is lowered by s with probability p (an example calibration may call
 * noise-free though it is not; its per-draw SD is s·√(p(1 − p))).
 *
 * Composites are **unclamped by default**, so the expected composite is
 * exactly q + mean(effect) and a "true effect of Δ" is exactly Δ; pass
 * `clamp: true` to clip each composite to [0, 1] like a real scorer (which
 * shrinks effects near the bounds). Keep q ± a few SDs inside [0, 1] when it
 * matters.
 *
 * Every random draw comes from the given seed (Mulberry32 via
 * `createSeededRandom`) or `random` source; Gaussian draws use the
 * Box–Muller transform (Box & Muller 1958).
 */
import { aggregate } from '../../evaluator/evaluator.ts';
import type {
  ComponentScores,
  ExampleScoreRecord,
  MetricScores,
  PartitionScore,
} from '../../evaluator/partition-score.ts';
import type { RandomSource } from '../../stats/index.ts';
import { createSeededRandom } from '../../stats/index.ts';

/** Randomness of a simulation: a seed, or a shared random source (which then advances). */
export type SimulationRandomness = { seed: number; random?: never } | { random: RandomSource; seed?: never };

/** A standard normal sampler: each call returns one N(0, 1) draw. */
export type NormalSampler = () => number;

/**
 * Standard normal draws from a uniform source (Box–Muller; the second value
 * of each pair is kept for the next call).
 *
 * @example
 * ```ts
 * const normal = createNormalSampler(createSeededRandom(1));
 * const draw = 0.6 + 0.1 * normal(); // N(0.6, 0.1²)
 * ```
 */
export function createNormalSampler(random: RandomSource): NormalSampler {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const u = 1 - random(); // in (0, 1]: log(u) is finite
    const v = random();
    const radius = Math.sqrt(-2 * Math.log(u));
    spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  };
}

/** Per-example difficulty offsets: `<prefix><index>` → N(0, sd²), in id order. */
export function createExampleEffects(
  options: { prefix: string; count: number; sd: number } & SimulationRandomness,
): Record<string, number> {
  const normal = createNormalSampler(options.random ?? createSeededRandom(options.seed!));
  const width = String(Math.max(0, options.count - 1)).length;
  const effects: Record<string, number> = {};
  for (let index = 0; index < options.count; index += 1) {
    effects[`${options.prefix}${String(index).padStart(width, '0')}`] = options.sd * normal();
  }
  return effects;
}

export type SimulatePartitionOptions = {
  /** Partition name written into the score. */
  partition: string;
  /** q: the artifact's true quality (composite units). */
  trueQuality: number;
  /** Example id → fixed difficulty offset (see {@link createExampleEffects}). */
  exampleEffects: Readonly<Record<string, number>>;
  /** SD of the independent per-example, per-run noise (≥ 0). */
  perExampleNoiseSd: number;
  /** SD of the noise shared by all examples of one run (≥ 0). */
  perRunNoiseSd: number;
  /** Number of runs (integer ≥ 1). */
  repeats: number;
  /** Examples with no noise (see the module comment); default none. */
  noiseFreeIds?: ReadonlySet<string>;
  /** A noise-free example's rare different answer: lowered by `size` with `probability` per draw. Default none. */
  slip?: { probability: number; size: number };
  /** Clip each composite to [0, 1]. Default false (see the module comment). */
  clamp?: boolean;
  /** Written into the score; default `simulated:q=<trueQuality>`. */
  artifactHash?: string;
  /** Written into the score; default `simulation`. */
  fingerprint?: string;
} & SimulationRandomness;

// Shared by every simulated record (read-only; frozen): the simulation scores
// no components, and allocating these per record dominated its cost.
const NO_METRICS: MetricScores = Object.freeze({});
const NO_COMPONENTS: ComponentScores = Object.freeze({});
const NO_SKIPPED = Object.freeze([]) as unknown as string[];
const NO_DIAGNOSTICS: Record<string, unknown> = Object.freeze({});

/**
 * Simulates `repeats` evaluations of an artifact of known true quality on one
 * partition and folds them with the evaluator's own `aggregate`.
 *
 * @returns a {@link PartitionScore} (every output valid; components empty,
 *   the composite is simulated directly; records share one frozen empty
 *   metrics/diagnostics object)
 * @throws RangeError on a repeat count < 1 or a negative SD
 *
 * @example
 * ```ts
 * const effects = createExampleEffects({ prefix: 'o', count: 40, sd: 0.15, seed: 1 });
 * const score = simulatePartitionScore({
 *   partition: 'optimization', trueQuality: 0.6, exampleEffects: effects,
 *   perExampleNoiseSd: 0.08, perRunNoiseSd: 0.01, repeats: 3, seed: 7,
 * });
 * score.runComposites.length; // 3
 * ```
 */
export function simulatePartitionScore(options: SimulatePartitionOptions): PartitionScore {
  if (!Number.isInteger(options.repeats) || options.repeats < 1)
    throw new RangeError(`repeats must be an integer ≥ 1, got ${options.repeats}`);
  if (!(options.perExampleNoiseSd >= 0) || !(options.perRunNoiseSd >= 0)) throw new RangeError('noise SDs must be ≥ 0');
  const entries = Object.entries(options.exampleEffects);
  const results = [];
  const random = options.random ?? createSeededRandom(options.seed!);
  const normal = createNormalSampler(random);
  const noiseFree = options.noiseFreeIds;
  const slip = options.slip;
  const draw = (exampleId: string, effect: number, runNoise: number): number => {
    if (noiseFree?.has(exampleId) !== true)
      return options.trueQuality + effect + runNoise + options.perExampleNoiseSd * normal();
    const slipped = slip !== undefined && slip.probability > 0 && random() < slip.probability;
    return options.trueQuality + effect - (slipped ? slip.size : 0);
  };
  for (let repeat = 0; repeat < options.repeats; repeat += 1) {
    const runNoise = options.perRunNoiseSd * normal();
    const records: ExampleScoreRecord[] = entries.map(([exampleId, effect]) => {
      let composite = draw(exampleId, effect, runNoise);
      if (options.clamp === true) composite = Math.min(1, Math.max(0, composite));
      return {
        exampleId,
        repeat,
        valid: true,
        composite,
        components: NO_COMPONENTS,
        skipped: NO_SKIPPED,
        metrics: NO_METRICS,
        diagnostics: NO_DIAGNOSTICS,
        feedback: '',
      };
    });
    results.push({ records, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, latencyMs: 0 });
  }
  return aggregate(
    options.partition,
    options.artifactHash ?? `simulated:q=${options.trueQuality}`,
    options.fingerprint ?? 'simulation',
    results,
  );
}

/** The expected (noise-free, unclamped) composite of an artifact on a partition: q + mean(effect). */
export function trueComposite(trueQuality: number, exampleEffects: Readonly<Record<string, number>>): number {
  const effects = Object.values(exampleEffects);
  return effects.length === 0
    ? trueQuality
    : trueQuality + effects.reduce((sum, value) => sum + value, 0) / effects.length;
}

/** σ: the run-to-run SD of a run-level composite over n examples, √(perRun² + perExample² / n). */
export function runLevelNoiseSd(options: {
  perExampleNoiseSd: number;
  perRunNoiseSd: number;
  examples: number;
}): number {
  return Math.sqrt(options.perRunNoiseSd ** 2 + options.perExampleNoiseSd ** 2 / options.examples);
}

/**
 * The first `repeats` repeats of a partition score, folded again with the
 * evaluator's `aggregate` (what a raced evaluation has after k complete
 * repeats; the loop reads them from the notebook).
 */
export function firstRepeats(score: PartitionScore, repeats: number): PartitionScore {
  const results = Array.from({ length: Math.min(repeats, score.repeats) }, (_, repeat) => ({
    records: score.examples.filter((record) => record.repeat === repeat),
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    latencyMs: 0,
  }));
  return aggregate(score.partition, score.artifactHash, score.fingerprint, results);
}
