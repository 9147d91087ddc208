/**
 * `proposer.maxEvaluations` and `proposer.maxScreened` from kloop.yaml reach
 * the proposers the CLI builds (loadStudy → compose.ts), and each limit and
 * its 0 changes what the proposer does: the number of candidate artifacts it
 * scores with the frozen evaluator, what it screens locally, what it proposes.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import type { ProposalResult } from '../proposers/proposer.ts';
import { createSeededRandom } from '../stats/index.ts';
import { loadStudy } from './load-study.ts';

const EXAMPLES = path.resolve(import.meta.dirname, '../../examples');
const directories: string[] = [];
afterAll(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A copy of an example study with `lines` added under `proposer:`. */
function variant(example: string, lines: string[]): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-proposer-limits-'));
  directories.push(directory);
  cpSync(path.join(EXAMPLES, example), directory, {
    recursive: true,
    filter: (source) => !source.includes(`${path.sep}.kloop`),
  });
  const file = path.join(directory, 'kloop.yaml');
  const text = readFileSync(file, 'utf8');
  const edited = text.replace(/^( {2}concurrency: \d+.*)$/m, `$1\n${lines.map((line) => `  ${line}`).join('\n')}`);
  expect(edited).not.toBe(text);
  writeFileSync(file, edited);
  return directory;
}

/** One proposal of the study's proposer on its seed, with the evaluator calls it makes counted. */
async function proposeOnce(
  directory: string,
  baseline: PartitionScore,
): Promise<ProposalResult & { evaluations: number }> {
  const study = loadStudy(directory);
  const evaluator = createStudyEvaluator(study);
  let evaluations = 0;
  const result = await study.proposer.propose({
    incumbentText: study.artifactText,
    instructions: study.instructions,
    constraints: study.constraintsText,
    limits: {
      editableSections: study.constraints.editableSections,
      maxArtifactCharacters: study.constraints.maxArtifactCharacters,
    },
    examples: study.partitions.optimization,
    incumbentScores: baseline,
    evaluateOptimization: (text) => {
      evaluations += 1;
      return evaluatePartition(evaluator, study, text, 'optimization');
    },
    history: [],
    triedHashes: new Set(),
    maxCandidates: study.candidatesPerRound,
    random: createSeededRandom(1),
    attempt: 0,
  });
  return { ...result, evaluations };
}

describe.each([
  { example: 'intent', proposer: 'error-driven@', perRound: 6 },
  { example: 'support-routing', proposer: 'keyword-rules@', perRound: 4 },
])('proposer limits of examples/$example', ({ example, proposer, perRound }) => {
  let baseline: PartitionScore;
  beforeAll(async () => {
    const study = loadStudy(path.join(EXAMPLES, example));
    expect(study.proposer.id.startsWith(proposer)).toBe(true);
    baseline = await evaluatePartition(createStudyEvaluator(study), study, study.artifactText, 'optimization');
  });

  it('maxEvaluations: 3 scores exactly 3 candidate artifacts (bundles included)', async () => {
    const result = await proposeOnce(variant(example, ['maxEvaluations: 3', 'maxScreened: 40']), baseline);
    expect(result.evaluations).toBe(3);
    expect(result.candidates.length).toBeGreaterThan(0);
    expect(result.candidates.length).toBeLessThanOrEqual(3);
  });

  it('maxEvaluations: 0 scores nothing and proposes its best locally screened edits, unscored', async () => {
    const result = await proposeOnce(variant(example, ['maxEvaluations: 0', 'maxScreened: 40']), baseline);
    expect(result.evaluations).toBe(0);
    expect(result.candidates.length).toBe(perRound);
    for (const candidate of result.candidates) {
      expect(candidate.rationale).toContain('not scored by the proposer (proposer.maxEvaluations 0)');
      expect(candidate.expectedNetFixes).toBeGreaterThanOrEqual(1);
    }
    const nets = result.candidates.map((candidate) => candidate.expectedNetFixes!);
    expect(nets).toEqual([...nets].sort((a, b) => b - a));
  });

  it('maxScreened: 0 screens nothing: the edits generated go to the evaluator unscreened, up to maxEvaluations', async () => {
    const result = await proposeOnce(variant(example, ['maxScreened: 0', 'maxEvaluations: 2']), baseline);
    // Screening first would send none of them (nothing screened, nothing passes); unscreened, both are scored.
    expect(result.evaluations).toBe(2);
  });

  it('maxScreened: 1 screens one edit, so at most one reaches the evaluator', async () => {
    const result = await proposeOnce(variant(example, ['maxScreened: 1', 'maxEvaluations: 4']), baseline);
    expect(result.evaluations).toBeLessThanOrEqual(1);
    expect(result.candidates.length).toBeLessThanOrEqual(1);
  });

  it('maxScreened: 0 and maxEvaluations: 0 propose the first edits generated, neither screened nor scored', async () => {
    const result = await proposeOnce(variant(example, ['maxScreened: 0', 'maxEvaluations: 0']), baseline);
    expect(result.evaluations).toBe(0);
    expect(result.candidates.length).toBe(perRound);
    for (const candidate of result.candidates) {
      expect(candidate.rationale).toContain('neither screened locally nor scored by the proposer');
      expect(candidate.expectedNetFixes).toBeUndefined();
    }
  });
});
