import { describe, expect, it } from 'vitest';
import { contentHash } from '../../artifact/content-hash.ts';
import type { PartitionScore } from '../../evaluator/partition-score.ts';
import { createSeededRandom } from '../../stats/seeded-random.ts';
import type { HistoryEntry, ProposalContext } from '../proposer.ts';
import { readParams, writeParams } from './params-file.ts';
import { createSearchProposer, describeParams, paramsOfDelta, trialsOf } from './search-proposer.ts';
import { searchSpaceSchema } from './space.ts';

const space = searchSpaceSchema.parse({
  'forest.trees': { type: 'int', low: 1, high: 64, log: true },
  'forest.maxFeatures': { type: 'float', low: 0.25, high: 1 },
  criterion: { type: 'choice', choices: ['gini', 'entropy'] },
});

const YAML = `# Hyper-parameters of the forest.
forest:
  trees: 2 # too few
  maxFeatures: 0.25
criterion: gini
seed: 1
`;

function context(overrides: Partial<ProposalContext> = {}): ProposalContext {
  return {
    incumbentText: YAML,
    instructions: '',
    constraints: '',
    limits: { editableSections: [], maxArtifactCharacters: 10_000 },
    examples: [],
    incumbentScores: { composite: 0.5 } as PartitionScore,
    evaluateOptimization: () => Promise.reject(new Error('the search proposer evaluates nothing itself')),
    history: [],
    triedHashes: new Set(),
    maxCandidates: 4,
    random: createSeededRandom(9),
    ...overrides,
  };
}

describe('the parameters file', () => {
  it('reads and writes parameters by dotted path, keeping comments and other keys (YAML) and the layout (JSON)', () => {
    expect(readParams(YAML, space, 'hyperparams.yaml', 'yaml')).toEqual({
      'forest.trees': 2,
      'forest.maxFeatures': 0.25,
      criterion: 'gini',
    });
    expect(writeParams(YAML, { 'forest.trees': 17, 'forest.maxFeatures': 0.5, criterion: 'entropy' }, 'yaml')).toBe(
      '# Hyper-parameters of the forest.\nforest:\n  trees: 17 # too few\n  maxFeatures: 0.5\ncriterion: entropy\nseed: 1\n',
    );
    const json = '{\n    "forest": { "trees": 2, "maxFeatures": 0.25 },\n    "criterion": "gini"\n}\n';
    expect(writeParams(json, { 'forest.trees': 3, 'forest.maxFeatures': 1, criterion: 'gini' }, 'json')).toBe(
      '{\n    "forest": {\n        "trees": 3,\n        "maxFeatures": 1\n    },\n    "criterion": "gini"\n}\n',
    );
    expect(() => readParams('forest:\n  trees: 2\n', space, 'hyperparams.yaml', 'yaml')).toThrow(
      'hyperparams.yaml has no value at forest.maxFeatures (proposer.space names it): the key is missing',
    );
  });

  it('round-trips the parameters through a delta; a delta of another kind holds none', () => {
    const params = { 'forest.trees': 17, 'forest.maxFeatures': 0.5, criterion: 'gini' };
    const delta = describeParams(params, { 'forest.trees': 2, 'forest.maxFeatures': 0.5, criterion: 'entropy' });
    expect(delta).toBe('forest.trees: 17 (was 2); forest.maxFeatures: 0.5; criterion: "gini" (was "entropy")');
    expect(paramsOfDelta(delta, space)).toEqual(params);
    expect(paramsOfDelta('add keyword "refund" to billing', space)).toBeUndefined();
  });
});

describe('createSearchProposer', () => {
  it('is deterministic under a seed, proposes distinct in-domain candidates and never an artifact tried before', async () => {
    const proposer = createSearchProposer({ space, artifactFile: 'hyperparams.yaml' });
    const first = await proposer.propose(context());
    const again = await proposer.propose(context());
    expect(first.candidates.map((candidate) => candidate.text)).toEqual(
      again.candidates.map((candidate) => candidate.text),
    );
    expect(first.candidates).toHaveLength(4);
    expect(new Set(first.candidates.map((candidate) => contentHash(candidate.text))).size).toBe(4);
    for (const candidate of first.candidates) {
      const params = readParams(candidate.text, space, 'hyperparams.yaml', 'yaml');
      expect(paramsOfDelta(candidate.delta, space)).toEqual(params);
      expect(candidate.text).toContain('seed: 1\n');
      expect(candidate.rationale).toMatch(/^random start: 1 of 6 scored points/);
    }
    // Rebased onto a newer incumbent, a candidate sets the same values there.
    const newer = YAML.replace('seed: 1', 'seed: 2');
    expect(first.candidates[0]!.rebase!(newer)).toBe(first.candidates[0]!.text.replace('seed: 1', 'seed: 2'));
    expect(first.candidates[0]!.rebase!(first.candidates[0]!.text)).toBeNull();
    const tried = new Set(first.candidates.slice(0, 2).map((candidate) => contentHash(candidate.text)));
    const next = await proposer.propose(context({ triedHashes: tried }));
    expect(next.candidates.some((candidate) => tried.has(contentHash(candidate.text)))).toBe(false);
  });

  it('learns from every scored experiment of the history, refused ones too, and switches to TPE after the startup points', async () => {
    const random = createSeededRandom(4);
    const history: HistoryEntry[] = [];
    const incumbent = readParams(YAML, space, 'hyperparams.yaml', 'yaml');
    for (let index = 0; index < 8; index += 1) {
      const trees = 1 + index * 8;
      const params = {
        'forest.trees': trees,
        'forest.maxFeatures': 0.25 + random() * 0.75,
        criterion: index % 2 === 0 ? 'gini' : 'entropy',
      };
      history.push({
        delta: describeParams(params, incumbent),
        decision: 'refused',
        reason: 'not_significant',
        optimizationScore: trees / 64,
      });
    }
    history.push({ delta: 'skipped one', decision: 'skipped', reason: 'duplicate' });
    expect(trialsOf(history, space, { params: incumbent, score: 0.5 })).toHaveLength(9);
    const result = await createSearchProposer({ space, artifactFile: 'hyperparams.yaml' }).propose(
      context({ history, maxCandidates: 6 }),
    );
    expect(result.candidates[0]!.rationale).toBe(
      'TPE: the values with the largest l(x)/g(x) among 24 draws from the best 3 of 9 scored points',
    );
    // Higher trees scored better: the model proposes many trees first; the round's later candidates
    // count the earlier ones as the worst point (constant liar), so they spread out.
    const trees = result.candidates.map(
      (candidate) => readParams(candidate.text, space, 'hyperparams.yaml', 'yaml')['forest.trees'] as number,
    );
    expect(trees).toEqual([61, 64, 64, 13, 29, 34]);
    expect(result.candidates[1]!.rationale).toBe(
      "TPE: the values with the largest l(x)/g(x) among 24 draws from the best 3 of 9 scored points and this round's 1 earlier candidates (counted as the worst)",
    );
  });

  it('obeys the Constraints register: a parameter outside the editable sections is a failure, and so is an incumbent it cannot read', async () => {
    const proposer = createSearchProposer({ space, artifactFile: 'hyperparams.yaml' });
    const frozen = await proposer.propose(
      context({ limits: { editableSections: ['forest'], maxArtifactCharacters: 10_000 } }),
    );
    expect(frozen).toEqual({
      candidates: [],
      failures: [
        {
          code: 'frozen_section',
          scope: 'answer',
          reason: "proposer.space names criterion, outside the editable sections of program.md's Constraints (forest)",
        },
      ],
    });
    const broken = await proposer.propose(context({ incumbentText: 'forest: [1, 2\n' }));
    expect(broken.failures[0]!.code).toBe('invalid_incumbent');
    expect(broken.failures[0]!.reason).toMatch(/^hyperparams\.yaml is not valid YAML/);
    const short = await proposer.propose(
      context({ limits: { editableSections: [], maxArtifactCharacters: YAML.length - 1 } }),
    );
    expect(short.candidates).toEqual([]);
  });
});
