/**
 * Structural gates: checks of a compiled app that do not need a language model
 * or a human, and the Loop A composite over a corpus (DESIGN.md §5).
 *
 * Each gate returns `{ name, passed, message }`; a failing gate names what
 * failed. Gates never throw on a well-typed input.
 */
import type { Intent } from '../tasks/intent/intent.ts';
import { normalizeEntityName } from '../tasks/intent/names.ts';
import type { Assembly } from './assemble.ts';
import type { BuildResult } from './build-spec.ts';
import type { AppSpecification, SpecTable } from './compile.ts';
import { isReservedWord, isValidIdentifier } from './sql-names.ts';

/** The structural gates, in the order they are reported. */
export const STRUCTURAL_GATE_NAMES = [
  'sql-builds',
  'entities-have-tables',
  'relations-resolve',
  'no-orphan-tables',
  'identifiers-valid',
  'no-reserved-table-names',
  'projections-resolve',
  'commitments-have-time',
  'many-to-many-join-tables',
] as const;
export type StructuralGateName = (typeof STRUCTURAL_GATE_NAMES)[number];

/** The verdict of one gate. */
export interface StructuralGateResult {
  name: StructuralGateName;
  passed: boolean;
  message: string;
}

/**
 * Run every structural gate:
 * - `sql-builds`: the DDL built in SQLite (`buildSpec`);
 * - `entities-have-tables`: every intent entity has a table;
 * - `relations-resolve`: every relation has a table at both ends;
 * - `no-orphan-tables`: every entity table takes part in a relation with
 *   another table, unless the app has at most one entity table;
 * - `identifiers-valid`: tables, views and columns are valid unquoted
 *   identifiers (`[a-z_][a-z0-9_]*`, ≤ 63 characters), columns not reserved
 *   words; table and view names unique, column names unique per table;
 * - `no-reserved-table-names`: no table or view is named with a reserved word;
 * - `projections-resolve`: every projection is on a real table, has its view
 *   (except forms), and every projection kind of the intent is present;
 * - `commitments-have-time`: every commitment entity's table has a time column;
 * - `many-to-many-join-tables`: every many-to-many relation has a join table
 *   with a foreign key to each side and a two-column primary key.
 */
export function runStructuralGates(
  intent: Intent,
  assembly: Pick<Assembly, 'app'>,
  spec: AppSpecification,
  build: BuildResult,
): StructuralGateResult[] {
  const entityTables = spec.tables.filter((table) => table.kind === 'entity');
  const context: GateContext = {
    intent,
    assembly,
    spec,
    tableNames: new Set(spec.tables.map((table) => table.name)),
    entityTables,
    tableOfEntity: new Map(entityTables.map((table) => [normalizeEntityName(table.entity ?? ''), table])),
  };
  const resolvedRelations = resolvedRelationsOf(context);
  return [
    sqlBuildsGate(build),
    entitiesHaveTablesGate(context),
    relationsResolveGate(context, resolvedRelations),
    noOrphanTablesGate(context, resolvedRelations),
    gate('identifiers-valid', identifierProblems(spec), 'all identifiers are valid and unique'),
    noReservedTableNamesGate(spec),
    projectionsResolveGate(context),
    commitmentsHaveTimeGate(context),
    manyToManyJoinTablesGate(spec),
  ];
}

/** What the gates share: the inputs and the tables indexed once. */
interface GateContext {
  intent: Intent;
  assembly: Pick<Assembly, 'app'>;
  spec: AppSpecification;
  tableNames: Set<string>;
  entityTables: SpecTable[];
  tableOfEntity: Map<string, SpecTable>;
}

type SpecRelation = AppSpecification['relations'][number];

function gate(name: StructuralGateName, problems: string[], success: string): StructuralGateResult {
  return problems.length === 0
    ? { name, passed: true, message: success }
    : {
        name,
        passed: false,
        message: `${problems.length} problem(s): ${problems.slice(0, 10).join('; ')}${problems.length > 10 ? '; …' : ''}`,
      };
}

function sqlBuildsGate(build: BuildResult): StructuralGateResult {
  return build.ok
    ? { name: 'sql-builds', passed: true, message: `built ${build.tables} tables and ${build.views} views in SQLite` }
    : {
        name: 'sql-builds',
        passed: false,
        message: `SQLite ${build.error.stage} error${build.error.statementIndex === undefined ? '' : ` in statement ${build.error.statementIndex}`}: ${build.error.message}`,
      };
}

function entitiesHaveTablesGate({ intent, tableOfEntity }: GateContext): StructuralGateResult {
  return gate(
    'entities-have-tables',
    intent.entities
      .filter((entity) => !tableOfEntity.has(normalizeEntityName(entity.name)))
      .map((entity) => `no table for ${entity.name}`),
    `${intent.entities.length} intent entities have tables`,
  );
}

function resolvedRelationsOf({ spec, tableNames }: GateContext): SpecRelation[] {
  return spec.relations.filter(
    (relation) =>
      relation.resolved &&
      relation.fromTable !== undefined &&
      relation.toTable !== undefined &&
      tableNames.has(relation.fromTable) &&
      tableNames.has(relation.toTable),
  );
}

function relationsResolveGate(
  { spec, tableNames }: GateContext,
  resolvedRelations: readonly SpecRelation[],
): StructuralGateResult {
  return gate(
    'relations-resolve',
    spec.relations
      .filter((relation) => !resolvedRelations.includes(relation))
      .map(
        (relation) =>
          `${relation.from} → ${relation.to} (missing table for ${relation.fromTable === undefined || !tableNames.has(relation.fromTable) ? relation.from : relation.to})`,
      ),
    `${spec.relations.length} relations resolve to two tables`,
  );
}

function noOrphanTablesGate(
  { entityTables }: GateContext,
  resolvedRelations: readonly SpecRelation[],
): StructuralGateResult {
  const related = new Set<string>();
  for (const relation of resolvedRelations) {
    if (relation.fromTable === relation.toTable) continue;
    related.add(relation.fromTable!);
    related.add(relation.toTable!);
  }
  return gate(
    'no-orphan-tables',
    entityTables.length <= 1
      ? []
      : entityTables
          .filter((table) => !related.has(table.name))
          .map((table) => `${table.name} is related to no other table`),
    entityTables.length <= 1
      ? 'one table or fewer: nothing to relate'
      : `all ${entityTables.length} entity tables are related`,
  );
}

function noReservedTableNamesGate(spec: AppSpecification): StructuralGateResult {
  return gate(
    'no-reserved-table-names',
    [...spec.tables.map((table) => table.name), ...spec.views.map((view) => view.name)]
      .filter(isReservedWord)
      .map((name) => `"${name}" is a reserved word`),
    'no table or view uses a reserved word',
  );
}

function projectionsResolveGate({ intent, spec, tableNames }: GateContext): StructuralGateResult {
  const viewNames = new Set(spec.views.map((view) => view.name));
  const projectionProblems: string[] = [];
  for (const projection of spec.projections) {
    if (projection.table === undefined || !tableNames.has(projection.table))
      projectionProblems.push(`${projection.kind} of ${projection.entity} has no table`);
    else if (projection.kind !== 'form' && (projection.view === undefined || !viewNames.has(projection.view))) {
      projectionProblems.push(`${projection.kind} of ${projection.entity} has no view`);
    }
  }
  if (intent.entities.length > 0) {
    const present = new Set(spec.projections.map((projection) => projection.kind));
    for (const kind of new Set(intent.projections))
      if (!present.has(kind)) projectionProblems.push(`intent projection ${kind} is missing`);
  }
  return gate('projections-resolve', projectionProblems, `${spec.projections.length} projections are on real tables`);
}

function commitmentsHaveTimeGate({ assembly, tableOfEntity }: GateContext): StructuralGateResult {
  const commitments = assembly.app.entities.filter((entity) => entity.role === 'commitment');
  return gate(
    'commitments-have-time',
    commitments
      .filter((entity) => {
        const table = tableOfEntity.get(normalizeEntityName(entity.name));
        return (
          table === undefined ||
          table.timeColumn === undefined ||
          !table.columns.some((column) => column.name === table.timeColumn)
        );
      })
      .map((entity) => `commitment ${entity.name} has no time column`),
    commitments.length === 0 ? 'no commitments' : `${commitments.length} commitments have a time column`,
  );
}

function manyToManyJoinTablesGate(spec: AppSpecification): StructuralGateResult {
  const manyToMany = spec.relations.filter((relation) => relation.cardinality === 'many_to_many');
  return gate(
    'many-to-many-join-tables',
    manyToMany.flatMap((relation) => {
      const join =
        relation.implementation?.type === 'join_table'
          ? spec.tables.find((table) => table.name === relation.implementation?.table)
          : undefined;
      return join !== undefined && isJoinTable(join, relation.fromTable, relation.toTable)
        ? []
        : [`${relation.from} ↔ ${relation.to} has no join table`];
    }),
    manyToMany.length === 0
      ? 'no many-to-many relations'
      : `${manyToMany.length} many-to-many relations have join tables`,
  );
}

function isJoinTable(table: SpecTable, fromTable: string | undefined, toTable: string | undefined): boolean {
  const targets = table.columns.flatMap((column) => (column.references === undefined ? [] : [column.references.table]));
  return (
    table.kind === 'join' &&
    table.primaryKey.length === 2 &&
    fromTable !== undefined &&
    toTable !== undefined &&
    targets.includes(fromTable) &&
    targets.includes(toTable) &&
    targets.length >= 2
  );
}

function identifierProblems(spec: AppSpecification): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of [...spec.tables.map((table) => table.name), ...spec.views.map((view) => view.name)]) {
    if (!isValidIdentifier(name)) problems.push(`"${name}" is not a valid identifier`);
    if (seen.has(name.toLowerCase())) problems.push(`"${name}" is defined twice`);
    seen.add(name.toLowerCase());
  }
  for (const table of spec.tables) {
    const columns = new Set<string>();
    for (const column of table.columns) {
      if (!isValidIdentifier(column.name)) problems.push(`${table.name}."${column.name}" is not a valid identifier`);
      else if (isReservedWord(column.name)) problems.push(`${table.name}.${column.name} is a reserved word`);
      if (columns.has(column.name.toLowerCase())) problems.push(`${table.name}.${column.name} is defined twice`);
      columns.add(column.name.toLowerCase());
    }
  }
  return problems;
}

/** Weights of the Loop A composite; they sum to 1. */
export const LOOP_A_WEIGHTS = Object.freeze({
  compileSuccess: 0.5,
  gatePassRate: 0.3,
  allGatesPassed: 0.2,
});

/** One example's Loop A outcome (what `buildFromIntent` returns, or its build and gates). */
export interface LoopAExample {
  build: BuildResult;
  gates: readonly StructuralGateResult[];
}

/** The Loop A composite over a corpus and its parts. */
export interface LoopAScore {
  /** In [0, 1]; `null` when there are no examples (no evidence is not a 0). */
  score: number | null;
  /** Share of examples whose SQL built. */
  compileSuccessRate: number | null;
  /** Mean over examples of (gates passed / gates run). */
  meanGatePassRate: number | null;
  /** Share of examples with every gate passed. */
  allGatesPassedRate: number | null;
  examples: number;
}

/**
 * The Loop A composite (the end-to-end loop of DESIGN.md §5, whose evaluator
 * is compile success, structural quality and gate pass rate):
 *
 *     score = 0.5 × compile success rate
 *           + 0.3 × mean structural-gate pass rate
 *           + 0.2 × share of examples with all gates passed
 *
 * (weights: {@link LOOP_A_WEIGHTS}). Only examples with an assembled app
 * count: an intent that could not be produced is invalid and is counted by
 * the caller, never scored here as 0. An example with no gates has a pass
 * rate of 0. Empty input gives `null` parts.
 */
export function loopAScore(results: readonly LoopAExample[]): LoopAScore {
  const examples = results.length;
  if (examples === 0) {
    return { score: null, compileSuccessRate: null, meanGatePassRate: null, allGatesPassedRate: null, examples };
  }
  const compileSuccessRate = results.filter((result) => result.build.ok).length / examples;
  const meanGatePassRate =
    results.reduce(
      (sum, result) =>
        sum + (result.gates.length === 0 ? 0 : result.gates.filter((gate) => gate.passed).length / result.gates.length),
      0,
    ) / examples;
  const allGatesPassedRate =
    results.filter((result) => result.gates.length > 0 && result.gates.every((gate) => gate.passed)).length / examples;
  const score =
    LOOP_A_WEIGHTS.compileSuccess * compileSuccessRate +
    LOOP_A_WEIGHTS.gatePassRate * meanGatePassRate +
    LOOP_A_WEIGHTS.allGatesPassed * allGatesPassedRate;
  return { score, compileSuccessRate, meanGatePassRate, allGatesPassedRate, examples };
}
