/**
 * The adaptive-repeats part of `npm run bench:gate` (src/gate/noise-free.ts,
 * `gate.adaptiveRepeats`): today's full repeats and the rule, on the same
 * draws, in a temperature-0 world where a third of the examples are
 * noise-free (like the `varied` noise profile of tests/simulated-llm-world.ts)
 * — some of them with a rare different answer (a slip) that calibration and
 * the incumbent's repeats may miss, which is where the rule could err.
 *
 * Per trial: a fresh corpus (which examples are noise-free drawn with it), a
 * calibration, the incumbent with 4R repeats (three rounds of top-ups), and
 * one candidate per column (no-op, 0.5σ, 1σ, 2σ, overfit). Today: the real
 * gate on the full evaluations. The rule: the same evaluations cut to what it
 * pays for (src/test-support/simulation/adaptive-trial.ts), the real gate on
 * them. Evaluations per decision = the candidate's example-repeats paid
 * (optimization, anchor, the shadow when the gate consulted it); the
 * incumbent's top-ups (repeats R … 4R − 1 on every partition) apart.
 */
import { DEFAULT_GATE_SETTINGS } from '../src/gate/gate.ts';
import { createSeededRandom } from '../src/stats/index.ts';
import {
  adaptiveCandidate,
  adaptiveIncumbent,
  createSimulatedCorpus,
  decideSimulated,
  evaluateSimulatedArtifact,
  evaluateSimulatedIncumbent,
  gateCalibrationFor,
  scenarioSigma,
  simulateCalibration,
  type GateScenario,
  type PartitionQualities,
} from '../src/test-support/simulation/index.ts';

/** The columns: the candidate's true change per partition, in σ. */
const COLUMNS: ReadonlyArray<{ label: string; change: (sigma: number) => PartitionQualities }> = [
  ...[0, 0.5, 1, 2].map((effect) => ({
    label: effect === 0 ? 'no-op' : `${effect}σ`,
    change: (sigma: number) => ({ optimization: effect * sigma, anchor: effect * sigma, shadow: effect * sigma }),
  })),
  { label: 'overfit', change: (sigma: number) => ({ optimization: 2 * sigma, anchor: 0, shadow: 0 }) },
];

interface Side {
  accepted: number[];
  evaluations: number[];
  topUps: number;
}

/** Today's full repeats and the rule on the same draws; `differing` counts decisions that differ. */
export interface AdaptiveResults {
  scenario: GateScenario;
  sigma: number;
  trials: number;
  full: Side;
  adaptive: Side;
  differing: number;
}

const newSide = (): Side => ({ accepted: COLUMNS.map(() => 0), evaluations: COLUMNS.map(() => 0), topUps: 0 });

/** Runs `trials` trials of the scenario (seeded from `seedBase`). */
export async function runAdaptiveRepeats(
  scenario: GateScenario,
  trials: number,
  seedBase: number,
): Promise<AdaptiveResults> {
  const sigma = scenarioSigma(scenario);
  const repeats = scenario.repeats;
  const sizes = scenario.examples;
  const incumbentRepeats = scenario.incumbentRepeats ?? repeats;
  const topUps = (incumbentRepeats - repeats) * (sizes.optimization + sizes.anchor + sizes.shadow);
  const full = newSide();
  const adaptive = newSide();
  let differing = 0;
  for (let trial = 0; trial < trials; trial += 1) {
    const random = createSeededRandom(seedBase + trial);
    const corpus = createSimulatedCorpus(scenario, random);
    const calibration = gateCalibrationFor(simulateCalibration(scenario, corpus, random));
    const incumbent = evaluateSimulatedIncumbent(scenario, corpus, random);
    const cutIncumbent = adaptiveIncumbent(incumbent, calibration, repeats);
    full.topUps += topUps;
    adaptive.topUps += topUps - cutIncumbent.saved;
    for (const [column, { change }] of COLUMNS.entries()) {
      const delta = change(sigma);
      const q = scenario.trueQuality;
      const candidate = evaluateSimulatedArtifact(
        scenario,
        corpus,
        { optimization: q + delta.optimization, anchor: q + delta.anchor, shadow: q + delta.shadow },
        random,
      );
      const today = await decideSimulated(incumbent, candidate, calibration, DEFAULT_GATE_SETTINGS);
      const cut = adaptiveCandidate(candidate, cutIncumbent.evaluation, calibration);
      const rule = await decideSimulated(cutIncumbent.evaluation, cut.evaluation, calibration, DEFAULT_GATE_SETTINGS);
      const paid = (shadow: boolean): number =>
        repeats * (sizes.optimization + sizes.anchor + (shadow ? sizes.shadow : 0));
      full.evaluations[column]! += paid(today.shadowConsulted);
      adaptive.evaluations[column]! += paid(rule.shadowConsulted) - cut.saved;
      if (today.accepted) full.accepted[column]! += 1;
      if (rule.accepted) adaptive.accepted[column]! += 1;
      if (today.accepted !== rule.accepted) differing += 1;
    }
  }
  return { scenario, sigma, trials, full, adaptive, differing };
}

const percent = (value: number): string => `${(value * 100).toFixed(1)}%`;

/** The two rows (today, the rule) and what they show; `table` formats a Markdown table. */
export function printAdaptiveRepeats(
  results: AdaptiveResults,
  exact: AdaptiveResults,
  table: (headers: string[], rows: string[][]) => string,
  targets: { falseAccept: number; accept2Sigma: number; overfit: number },
): string[] {
  const { scenario, trials } = results;
  const slip = scenario.noiseFree?.slip;
  console.log(
    `\nAdaptive repeats (gate.adaptiveRepeats, src/gate/noise-free.ts) beside today's full repeats, on the same draws, R = ${scenario.repeats}, incumbent ${scenario.incumbentRepeats ?? scenario.repeats} repeats: ` +
      `a temperature-0 world, each example noise-free with probability ${scenario.noiseFree?.share.toFixed(2)} (σ = ${results.sigma.toFixed(5)})` +
      (slip !== undefined
        ? `, a noise-free example answering differently (−${slip.size}) in ${percent(slip.probability)} of draws`
        : '') +
      `; ${trials} decisions per column; evaluations = the candidate's example-repeats paid (the shadow in full, when consulted):`,
  );
  const perDecision = (side: Side): string[] => side.evaluations.map((sum) => (sum / trials).toFixed(0));
  const mean = (side: Side): number =>
    side.evaluations.reduce((sum, value) => sum + value, 0) / trials / COLUMNS.length;
  const rate = (side: Side, column: number): string => percent(side.accepted[column]! / trials);
  const row = (label: string, side: Side, relative?: Side): string[] => [
    label,
    perDecision(side).join(' / '),
    relative === undefined
      ? mean(side).toFixed(0)
      : `${mean(side).toFixed(0)} (${percent(mean(side) / mean(relative))})`,
    relative === undefined
      ? (side.topUps / trials).toFixed(0)
      : `${(side.topUps / trials).toFixed(0)} (${percent(side.topUps / relative.topUps)})`,
    ...COLUMNS.map((_, column) => rate(side, column)),
  ];
  console.log(
    table(
      [
        'repeats',
        `evaluations per decision (${COLUMNS.map((column) => column.label).join(' / ')})`,
        'mean of the five',
        'incumbent top-ups (3 rounds)',
        'false accepts (no-op)',
        'accept 0.5σ',
        'accept 1σ',
        'accept 2σ',
        'accepted overfits',
      ],
      [row('today (full)', results.full), row('adaptive', results.adaptive, results.full)],
    ),
  );
  console.log(
    `  decisions that differ from today's on the same draws: ${results.differing} of ${trials * COLUMNS.length}; without slips (every noise-free example truly noise-free, ${exact.trials} trials): ${exact.differing} of ${exact.trials * COLUMNS.length} (the copies are then exactly the draws)`,
  );
  const falseAccept = results.adaptive.accepted[0]! / trials;
  const twoSigma = results.adaptive.accepted[3]! / trials;
  const overfit = results.adaptive.accepted[4]! / trials;
  const today = (column: number): string => percent(results.full.accepted[column]! / trials);
  return [
    `  adaptive repeats: evaluations per decision ${percent(mean(results.adaptive) / mean(results.full))} of today's, incumbent top-ups ${percent(results.adaptive.topUps / results.full.topUps)}; ` +
      `no-op false accepts ${percent(falseAccept)} (today ${today(0)}; ≤ ${percent(targets.falseAccept)}: ${falseAccept <= targets.falseAccept ? 'met' : 'missed'}); ` +
      `accepted overfits ${percent(overfit)} (today ${today(4)}; ≤ ${percent(targets.overfit)}: ${overfit <= targets.overfit ? 'met' : 'missed'}); ` +
      `2σ acceptance ${percent(twoSigma)} (today ${today(3)}; ≥ ${percent(targets.accept2Sigma)}: ${twoSigma >= targets.accept2Sigma ? 'met' : 'missed'})`,
  ];
}
