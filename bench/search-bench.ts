/**
 * Search benchmark (`npm run bench:search`): the search proposer with its
 * TPE model against the same proposer with `tpe: false` (random search), at
 * the same evaluation budget, on the study of examples/ml-training: its
 * space, its seed hyper-parameters, its `startupTrials` and
 * `candidatesPerRound`, its corpus (folds × seeds) and the random forest of
 * its `forest.mjs`, trained in this process rather than once per example in
 * a child process (the same code, the same numbers, much faster).
 *
 * For each sampler seed and each mode: rounds of `candidatesPerRound`
 * candidates until `BUDGET` candidates are evaluated; each candidate is
 * scored by its mean accuracy on the optimization folds, and recorded in the
 * history the proposer reads next round (as the loop records every decided
 * experiment with its optimization score). Reported: the best optimization
 * accuracy reached, the evaluation that first reached it, and the mean
 * accuracy of that best point on the shadow folds (which neither sampler
 * sees). The gate is left out on purpose: the bench compares samplers, and
 * the gate would decide identically for both.
 *
 * Everything is seeded: the output is identical on every run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Table from 'cli-table3';
import { parse } from 'yaml';
import { contentHash } from '../src/artifact/content-hash.ts';
import type { PartitionScore } from '../src/evaluator/partition-score.ts';
import type { HistoryEntry, ProposalContext } from '../src/proposers/proposer.ts';
import { createSearchProposer } from '../src/proposers/search/search-proposer.ts';
import { createSeededRandom } from '../src/stats/seeded-random.ts';
import { loadStudyConfig } from '../src/config/config.ts';

const STUDY = path.resolve(import.meta.dirname, '../examples/ml-training');
/** Candidates evaluated per sampler seed and mode. */
const BUDGET = 24;
/** Sampler seeds. */
const SEEDS = [1, 2, 3, 4, 5];

interface Example {
  input: { fold: number; seed: number };
  partition: string;
}

type Forest = { evaluateFold: (params: unknown, fold: number, seed: number) => { accuracy: number } };
const { evaluateFold } = (await import(path.join(STUDY, 'forest.mjs'))) as Forest;
const config = loadStudyConfig(STUDY);
const seedText = readFileSync(config.artifact, 'utf8');
const corpus = parse(readFileSync(path.join(STUDY, 'corpus/folds.yaml'), 'utf8')) as Example[];
const partition = (name: string): Example[] => corpus.filter((example) => example.partition === name);

/** Mean validation accuracy of the hyper-parameters in `text` over `examples`. */
function accuracy(text: string, examples: readonly Example[]): number {
  const params = parse(text) as unknown;
  return (
    examples.reduce((sum, example) => sum + evaluateFold(params, example.input.fold, example.input.seed).accuracy, 0) /
    examples.length
  );
}

interface Outcome {
  best: number;
  at: number;
  shadow: number;
}

async function search(seed: number, tpe: boolean): Promise<Outcome> {
  const proposer = createSearchProposer({
    space: config.proposer.space!,
    artifactFile: path.basename(config.artifact),
    sampler: {
      tpe,
      ...(config.proposer.startupTrials !== undefined ? { startupTrials: config.proposer.startupTrials } : {}),
    },
  });
  const optimization = partition('optimization');
  const incumbentScore = accuracy(seedText, optimization);
  const history: HistoryEntry[] = [];
  const triedHashes = new Set<string>([contentHash(seedText)]);
  let best = { score: incumbentScore, at: 0, text: seedText };
  for (let round = 1; history.length < BUDGET; round += 1) {
    const context: ProposalContext = {
      incumbentText: seedText,
      instructions: '',
      constraints: '',
      limits: { editableSections: [], maxArtifactCharacters: 10_000 },
      examples: [],
      incumbentScores: { composite: incumbentScore } as PartitionScore,
      evaluateOptimization: () => Promise.reject(new Error('not used')),
      history: [...history],
      triedHashes: new Set(triedHashes),
      maxCandidates: Math.min(config.proposer.candidatesPerRound, BUDGET - history.length),
      random: createSeededRandom(seed * 1000 + round),
    };
    const { candidates } = await proposer.propose(context);
    if (candidates.length === 0) break;
    for (const candidate of candidates) {
      const score = accuracy(candidate.text, optimization);
      history.push({ delta: candidate.delta, decision: 'refused', reason: 'bench', optimizationScore: score });
      triedHashes.add(contentHash(candidate.text));
      if (score > best.score) best = { score, at: history.length, text: candidate.text };
    }
  }
  return { best: best.score, at: best.at, shadow: accuracy(best.text, partition('shadow')) };
}

const format = (value: number): string => value.toFixed(4);
const table = new Table({
  head: ['seed', 'sampler', 'best optimization accuracy', 'evaluations to reach it', 'its shadow accuracy'],
  style: { head: [], border: [], compact: true },
});
const totals = { tpe: { best: 0, at: 0, shadow: 0 }, random: { best: 0, at: 0, shadow: 0 } };
const started = Date.now();
for (const seed of SEEDS) {
  for (const [name, tpe] of [
    ['tpe', true],
    ['random', false],
  ] as const) {
    const outcome = await search(seed, tpe);
    table.push([
      seed,
      name === 'tpe' ? 'search (TPE)' : 'random search',
      format(outcome.best),
      outcome.at,
      format(outcome.shadow),
    ]);
    totals[name].best += outcome.best;
    totals[name].at += outcome.at;
    totals[name].shadow += outcome.shadow;
  }
}
for (const [name, total] of Object.entries(totals)) {
  table.push([
    'mean',
    name === 'tpe' ? 'search (TPE)' : 'random search',
    format(total.best / SEEDS.length),
    (total.at / SEEDS.length).toFixed(1),
    format(total.shadow / SEEDS.length),
  ]);
}
console.log(
  `examples/ml-training: ${BUDGET} evaluations per run, ${config.proposer.candidatesPerRound} per round, startupTrials ${config.proposer.startupTrials ?? 'default'}; seed hyper-parameters ${format(accuracy(seedText, partition('optimization')))} optimization, ${format(accuracy(seedText, partition('shadow')))} shadow`,
);
console.log(table.toString());
console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);
