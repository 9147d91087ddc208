import { describe, expect, it } from 'vitest';
import type { AssemblyMethod } from '../assembly/assemble.ts';
import { loopAScore, STRUCTURAL_GATE_NAMES, type StructuralGateName } from '../assembly/gates.ts';
import { loadBuiltInPatternLibrary, parsePatternText } from '../assembly/pattern-library.ts';
import type { PartitionName } from '../corpus/example.ts';
import type { IntentExample } from '../corpus/intent-example.ts';
import { aggregate } from '../evaluator/evaluator.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import type { Intent } from '../tasks/intent/intent.ts';
import type { LoopAEvaluation, LoopAExampleResult } from './loop-a.ts';
import { compareLoopA, decideLoopA, summarizeLoopA } from './loop-a.ts';
import { minePatternCandidates, type MiningExample } from './loop-a-patterns.ts';

const INTENT: Intent = {
  appType: 'booking',
  entities: [{ name: 'Booking', role: 'commitment' }],
  relations: [],
  behaviors: [],
  projections: [],
};

function valid(
  id: string,
  partition: PartitionName,
  options: { compiled?: boolean; failed?: StructuralGateName[]; confidence?: number; method?: AssemblyMethod } = {},
): LoopAExampleResult {
  const compiled = options.compiled ?? true;
  const failed = new Set<StructuralGateName>(options.failed ?? []);
  if (!compiled) failed.add('sql-builds');
  const gates = STRUCTURAL_GATE_NAMES.map((name) => ({ name, passed: !failed.has(name), message: '' }));
  return {
    id,
    partition,
    valid: true,
    intent: INTENT,
    method: options.method ?? 'partial',
    confidence: options.confidence ?? 0.5,
    patterns: [],
    uncovered: { entities: [], behaviors: [] },
    build: compiled
      ? { ok: true, tables: 1, views: 0 }
      : { ok: false, error: { stage: 'statement', message: 'syntax error' } },
    gates,
    failedGates: [...failed],
    gatePassRate: (gates.length - failed.size) / gates.length,
    allGatesPassed: failed.size === 0,
  };
}

function invalid(id: string, partition: PartitionName): LoopAExampleResult {
  return { id, partition, valid: false, invalidReason: 'unparsable', message: 'no JSON' };
}

function evaluation(results: LoopAExampleResult[]): LoopAEvaluation {
  return { ...summarizeLoopA(results), artifactHash: 'hash', patterns: [], partitions: {}, results };
}

function anchorScore(composites: Record<string, number>): PartitionScore {
  const records: ExampleScoreRecord[] = Object.entries(composites).map(([exampleId, composite]) => ({
    exampleId,
    repeat: 0,
    valid: true,
    composite,
    components: {},
    skipped: [],
    metrics: { entityPrecision: null, relationRecall: null, projectionCoverage: null },
    diagnostics: {},
    feedback: '',
  }));
  return aggregate('anchor', 'hash', 'fingerprint', [
    { records, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, latencyMs: 0 },
  ]);
}

const SETTINGS = { minConfidenceGain: 0.01, anchorTolerance: 0 };

describe('summarizeLoopA', () => {
  it('counts invalid intents without scoring them, and counts failures per gate', () => {
    const results = [
      valid('a', 'optimization'),
      valid('b', 'optimization', { failed: ['no-orphan-tables'] }),
      valid('c', 'anchor', { compiled: false }),
      invalid('d', 'shadow'),
    ];
    const summary = summarizeLoopA(results);
    expect(summary).toMatchObject({
      examples: 4,
      valid: 3,
      invalid: 1,
      methods: { direct: 0, decomposed: 0, partial: 3 },
    });
    expect(summary.composite).toBeCloseTo(
      loopAScore(results.slice(0, 3) as Array<Extract<LoopAExampleResult, { valid: true }>>).score!,
      12,
    );
    expect(summary.compileSuccessRate).toBeCloseTo(2 / 3, 12);
    expect(summary.allGatesPassedRate).toBeCloseTo(1 / 3, 12);
    expect(summary.gateFailures['no-orphan-tables']).toBe(1);
    expect(summary.gateFailures['sql-builds']).toBe(1);
    expect(summarizeLoopA([invalid('x', 'shadow')]).composite).toBeNull();
  });
});

describe('decideLoopA', () => {
  const incumbent = evaluation([
    valid('a', 'optimization', { failed: ['no-orphan-tables'] }),
    valid('b', 'anchor', { failed: ['no-orphan-tables'] }),
    valid('c', 'shadow'),
  ]);

  it('refuses a candidate with more invalid intents', () => {
    const candidate = evaluation([valid('a', 'optimization'), invalid('b', 'anchor'), valid('c', 'shadow')]);
    expect(decideLoopA({ incumbent, candidate, anchors: null }, SETTINGS)).toMatchObject({
      passed: false,
      reason: 'invalid',
    });
  });

  it('refuses a drop on any partition even when the corpus composite rises', () => {
    const candidate = evaluation([
      valid('a', 'optimization'),
      valid('b', 'anchor'),
      valid('c', 'shadow', { failed: ['identifiers-valid'] }),
    ]);
    const decision = decideLoopA({ incumbent, candidate, anchors: null }, SETTINGS);
    expect(decision).toMatchObject({ passed: false, reason: 'loop_a_drop' });
    expect(decision.comparison?.compositeDelta).toBeGreaterThan(0);
    expect(decision.comparison?.partitionDeltas.shadow).toBeLessThan(0);
  });

  it('needs an improvement: a composite gain, or with an equal composite a confidence gain', () => {
    const same = (confidence: number) =>
      evaluation(
        incumbent.results.map((result) => (result.valid ? { ...result, confidence: 0.5 + confidence } : result)),
      );
    expect(decideLoopA({ incumbent, candidate: same(0.005), anchors: null }, SETTINGS)).toMatchObject({
      passed: false,
      reason: 'no_improvement',
    });
    const decision = decideLoopA({ incumbent, candidate: same(0.02), anchors: null }, SETTINGS);
    expect(decision.passed).toBe(true);
    expect(decision.checks.map((check) => check.name)).toEqual(['validity', 'no-drop', 'improvement', 'anchors']);
    expect(decision.checks.at(-1)?.detail).toMatch(/skipped/);
  });

  it('refuses a Loop A gain that costs an anchor its Loop B score', () => {
    const candidate = evaluation([valid('a', 'optimization'), valid('b', 'anchor'), valid('c', 'shadow')]);
    const before = anchorScore({ b: 0.8, e: 0.6 });
    expect(
      decideLoopA(
        { incumbent, candidate, anchors: { incumbent: before, candidate: anchorScore({ b: 0.8, e: 0.5 }) } },
        SETTINGS,
      ),
    ).toMatchObject({ passed: false, reason: 'anchor_regression' });
    const passed = decideLoopA(
      { incumbent, candidate, anchors: { incumbent: before, candidate: anchorScore({ b: 0.9, e: 0.6 }) } },
      SETTINGS,
    );
    expect(passed.passed).toBe(true);
    expect(passed.checks.find((check) => check.name === 'improvement')?.statistic).toBeGreaterThan(0);
  });

  it('compares on the examples valid for both and says how many were left out', () => {
    const withInvalid = evaluation([
      invalid('a', 'optimization'),
      valid('b', 'anchor', { failed: ['no-orphan-tables'] }),
      valid('c', 'shadow'),
    ]);
    const candidate = evaluation([valid('a', 'optimization'), valid('b', 'anchor'), valid('c', 'shadow')]);
    const comparison = compareLoopA(withInvalid, candidate);
    expect(comparison).toMatchObject({ paired: 2, leftOut: 1 });
    expect(comparison.candidate.examples).toBe(2);
  });
});

describe('minePatternCandidates', () => {
  const example = (id: string, partition: PartitionName = 'optimization'): IntentExample => ({
    id,
    input: `dogs stay in kennels ${id}`,
    text: `dogs stay in kennels ${id}`,
    expected: {
      appType: 'booking',
      entities: [{ name: 'Customer' }, { name: 'Booking' }, { name: 'Kennel', role: 'reference', aliases: ['Pen'] }],
    },
    tags: [],
    partition,
  });
  const mining = (id: string, partition: PartitionName = 'optimization', surface = 'Kennel'): MiningExample => ({
    example: example(id, partition),
    intent: {
      appType: 'booking',
      entities: [
        { name: 'Customer', role: 'party' },
        { name: 'Booking', role: 'commitment' },
        { name: surface, role: 'resource' },
        { name: 'Everything', role: 'resource' },
      ],
      relations: [],
      behaviors: [],
      projections: [],
    },
    method: 'partial',
    uncovered: { entities: [surface, 'Everything'], behaviors: [] },
  });
  const library = loadBuiltInPatternLibrary();

  it('proposes a valid pattern for a recurring, gold-grounded uncovered entity, hung off the central covered entity', () => {
    const [candidate, ...rest] = minePatternCandidates(
      [mining('a'), mining('b', 'optimization', 'Pen'), mining('c')],
      library,
    );
    expect(rest).toEqual([]);
    expect(candidate!.pattern.id).toBe('mined-booking');
    expect(candidate!.pattern.entities.map((entity) => [entity.name, entity.role])).toEqual([
      ['Booking', 'commitment'],
      ['Kennel', 'reference'],
    ]);
    expect(candidate!.pattern.entities[1]!.aliases).toEqual(['Pen']);
    expect(candidate!.pattern.relations).toEqual([
      { from: 'Booking', to: 'Kennel', cardinality: 'many_to_one', kind: 'association' },
    ]);
    expect(candidate!.support).toMatchObject({
      appType: 'booking',
      examples: ['a', 'b', 'c'],
      entities: { Kennel: 3 },
    });
    expect(parsePatternText(candidate!.yaml, 'x.yaml').success).toBe(true);
    expect(candidate!.yaml).not.toMatch(/Everything/);
  });

  it('needs the minimum support, and reads the optimization partition only', () => {
    expect(minePatternCandidates([mining('a'), mining('b', 'shadow'), mining('c', 'anchor')], library)).toEqual([]);
    expect(minePatternCandidates([mining('a')], library, { minSupport: 1 })).toHaveLength(1);
  });
});
