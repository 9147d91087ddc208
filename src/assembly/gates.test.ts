import { describe, expect, it } from 'vitest';
import type { Intent } from '../tasks/intent/intent.ts';
import type { AppEntity, AssembledApp } from './assembled-app.ts';
import { buildSpec, compileApp, type AppSpecification } from './compile.ts';
import {
  LOOP_A_WEIGHTS,
  loopAScore,
  runStructuralGates,
  STRUCTURAL_GATE_NAMES,
  type StructuralGateResult,
} from './gates.ts';
import { buildFromIntent } from './index.ts';
import { loadBuiltInPatternLibrary } from './pattern-library.ts';

const library = loadBuiltInPatternLibrary();

function entity(
  name: string,
  role: AppEntity['role'],
  fields: AppEntity['fields'] = [{ name: 'name', type: 'TEXT', required: true, unique: false }],
): AppEntity {
  return { name, role, fields, source: { patternId: null } };
}

function intentOf(app: AssembledApp): Intent {
  return {
    appType: app.appType,
    entities: app.entities.map(({ name, role }) => ({ name, role })),
    relations: [],
    behaviors: [],
    projections: [...new Set(app.projections.map((projection) => projection.kind))],
  };
}

function gatesOf(app: AssembledApp, mutate?: (spec: AppSpecification) => void): StructuralGateResult[] {
  const spec = compileApp(app);
  mutate?.(spec);
  return runStructuralGates(intentOf(app), { app }, spec, buildSpec(spec));
}

function failed(gates: readonly StructuralGateResult[]): string[] {
  return gates.filter((gate) => !gate.passed).map((gate) => gate.name);
}

const good: AssembledApp = {
  appType: 'booking',
  entities: [
    entity('Customer', 'party'),
    entity('Booking', 'commitment', [{ name: 'startsAt', type: 'DATETIME', required: true, unique: false }]),
    entity('Tag', 'reference'),
  ],
  relations: [
    { from: 'Customer', to: 'Booking', cardinality: 'one_to_many', kind: 'association', source: 'intent' },
    { from: 'Booking', to: 'Tag', cardinality: 'many_to_many', kind: 'association', source: 'intent' },
  ],
  behaviors: [],
  projections: [{ kind: 'calendar', entity: 'Booking' }],
};

describe('runStructuralGates', () => {
  it('runs every gate, in order, and passes a well-formed app', () => {
    const gates = gatesOf(good);
    expect(gates.map((gate) => gate.name)).toEqual([...STRUCTURAL_GATE_NAMES]);
    expect(failed(gates)).toEqual([]);
    expect(gates.find((gate) => gate.name === 'many-to-many-join-tables')?.message).toBe(
      '1 many-to-many relations have join tables',
    );
  });

  it('catches an app forced to produce invalid SQL (two entities on one table) without crashing', () => {
    const app: AssembledApp = {
      ...good,
      entities: [...good.entities, entity('Order', 'transaction'), entity('Order Record', 'transaction')],
    };
    let gates: StructuralGateResult[] = [];
    expect(() => {
      gates = gatesOf(app);
    }).not.toThrow();
    expect(failed(gates)).toEqual(expect.arrayContaining(['sql-builds', 'identifiers-valid']));
    expect(gates[0]?.message).toMatch(/table order_record already exists/);
  });

  it('catches an identifier that is not plain ASCII', () => {
    const gates = gatesOf({ ...good, entities: [...good.entities, entity('Größe Ω', 'reference')] });
    expect(failed(gates)).toEqual(expect.arrayContaining(['identifiers-valid']));
  });

  it('catches a relation and a projection to a missing table', () => {
    const app: AssembledApp = {
      ...good,
      relations: [
        ...good.relations,
        { from: 'Customer', to: 'Wallet', cardinality: 'one_to_one', kind: 'association', source: 'intent' },
      ],
      projections: [...good.projections, { kind: 'list', entity: 'Wallet' }],
    };
    const gates = gatesOf(app);
    expect(failed(gates)).toEqual(['relations-resolve', 'projections-resolve']);
    expect(gates.find((gate) => gate.name === 'relations-resolve')?.message).toContain(
      'Customer → Wallet (missing table for Wallet)',
    );
  });

  it('catches a foreign key whose target table was dropped from the spec', () => {
    const gates = gatesOf(good, (spec) => {
      spec.statements = spec.statements.filter((statement) => !statement.startsWith('CREATE TABLE customer'));
      spec.tables = spec.tables.filter((table) => table.name !== 'customer');
    });
    expect(failed(gates)).toEqual(expect.arrayContaining(['sql-builds', 'entities-have-tables', 'relations-resolve']));
  });

  it('flags orphan tables unless the app has a single table', () => {
    expect(failed(gatesOf({ ...good, entities: [...good.entities, entity('Loner', 'reference')] }))).toEqual([
      'no-orphan-tables',
    ]);
    expect(
      failed(gatesOf({ ...good, entities: [entity('Loner', 'reference')], relations: [], projections: [] })),
    ).toEqual([]);
  });

  it('flags a commitment without a time field', () => {
    const app: AssembledApp = {
      ...good,
      entities: [good.entities[0]!, entity('Booking', 'commitment'), good.entities[2]!],
      projections: [],
    };
    expect(failed(gatesOf(app))).toEqual(['commitments-have-time']);
  });

  it('flags a many-to-many relation without a join table, and reserved table names', () => {
    const gates = gatesOf(good, (spec) => {
      spec.tables = spec.tables.filter((table) => table.kind !== 'join');
      spec.tables[0]!.name = 'select';
    });
    expect(failed(gates)).toEqual(expect.arrayContaining(['many-to-many-join-tables', 'no-reserved-table-names']));
  });

  it('flags an intent projection kind the app lost', () => {
    const app: AssembledApp = { ...good };
    const spec = compileApp(app);
    const gates = runStructuralGates(
      { ...intentOf(app), projections: ['calendar', 'kanban'] },
      { app },
      spec,
      buildSpec(spec),
    );
    expect(gates.find((gate) => gate.name === 'projections-resolve')).toMatchObject({
      passed: false,
      message: expect.stringContaining('kanban is missing'),
    });
  });
});

describe('built-in patterns', () => {
  it.each(library.patterns.map((pattern) => [pattern.id, pattern] as const))(
    '%s compiles on its own: direct, confidence 1, every gate passes',
    (_id, pattern) => {
      const intent: Intent = {
        appType: pattern.appTypes[0]!,
        entities: pattern.entities.map(({ name, role }) => ({ name, role })),
        relations: pattern.relations.map(({ from, to, cardinality, kind }) => ({ from, to, cardinality, kind })),
        behaviors: [...pattern.behaviors],
        projections: [...new Set(pattern.projections.map((projection) => projection.kind))],
      };
      const result = buildFromIntent(intent, library);
      expect(result.assembly.method).toBe('direct');
      expect(result.assembly.confidence).toBe(1);
      expect(result.assembly.patterns.map((use) => use.id)).toEqual([pattern.id]);
      expect(result.build).toMatchObject({ ok: true });
      expect(result.gates.filter((gate) => !gate.passed)).toEqual([]);
      expect(result.spec.views.length).toBeGreaterThan(0);
      expect(result.spec.notes).toEqual([]);
    },
  );
});

describe('loopAScore', () => {
  const pass = (name: StructuralGateResult['name']): StructuralGateResult => ({ name, passed: true, message: '' });
  const fail = (name: StructuralGateResult['name']): StructuralGateResult => ({ name, passed: false, message: '' });

  it('is 0.5 × compile success + 0.3 × mean gate pass rate + 0.2 × all-gates-passed share', () => {
    const score = loopAScore([
      { build: { ok: true, tables: 1, views: 0 }, gates: [pass('sql-builds'), pass('no-orphan-tables')] },
      { build: { ok: true, tables: 1, views: 0 }, gates: [pass('sql-builds'), fail('no-orphan-tables')] },
      {
        build: { ok: false, error: { stage: 'statement', message: 'x' } },
        gates: [fail('sql-builds'), fail('no-orphan-tables')],
      },
      { build: { ok: true, tables: 1, views: 0 }, gates: [pass('sql-builds'), pass('no-orphan-tables')] },
    ]);
    expect(score.compileSuccessRate).toBe(0.75);
    expect(score.meanGatePassRate).toBeCloseTo((1 + 0.5 + 0 + 1) / 4, 12);
    expect(score.allGatesPassedRate).toBe(0.5);
    expect(score.score).toBeCloseTo(0.5 * 0.75 + 0.3 * 0.625 + 0.2 * 0.5, 12);
    expect(score.examples).toBe(4);
    expect(LOOP_A_WEIGHTS.compileSuccess + LOOP_A_WEIGHTS.gatePassRate + LOOP_A_WEIGHTS.allGatesPassed).toBeCloseTo(
      1,
      12,
    );
  });

  it('returns null, not 0, for an empty corpus', () => {
    expect(loopAScore([])).toEqual({
      score: null,
      compileSuccessRate: null,
      meanGatePassRate: null,
      allGatesPassedRate: null,
      examples: 0,
    });
  });

  it('scores buildFromIntent results directly', () => {
    const result = buildFromIntent(
      {
        appType: 'helpdesk',
        entities: [
          { name: 'Ticket', role: 'document' },
          { name: 'Agent', role: 'party' },
        ],
        relations: [],
        behaviors: ['assignment'],
        projections: ['kanban'],
      },
      library,
    );
    expect(loopAScore([result]).score).toBe(1);
  });
});
