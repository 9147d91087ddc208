/**
 * Compilation: an assembled app → an app specification (tables, keys, views)
 * and its full SQL DDL text (SQLite dialect, portable identifiers).
 *
 * Rules:
 * - one table per entity, named {@link tableNameForEntity} (snake_case of the
 *   normalised name; reserved words get `_record`), with `id INTEGER PRIMARY
 *   KEY`, one column per field (snake_case; `required` → NOT NULL, `unique` →
 *   UNIQUE, `values` → CHECK … IN (…) and, when required, the first value as
 *   DEFAULT), the foreign keys, and `created_at DATETIME NOT NULL DEFAULT
 *   CURRENT_TIMESTAMP`;
 * - relations (read `from` → `to`): `one_to_many` puts `<from>_id` on `to`;
 *   `many_to_one` puts `<to>_id` on `from`; `one_to_one` puts a UNIQUE
 *   `<from>_id` on `to` (for `is_a`, a UNIQUE NOT NULL `<to>_id` on `from`);
 *   `many_to_many` makes a join table `<from>_<to>` with two NOT NULL foreign
 *   keys and a composite primary key. A self relation's column is
 *   `parent_<entity>_id` (join table `<entity>_link`, second column
 *   `related_<entity>_id`). `composition` and `is_a` keys are NOT NULL with ON
 *   DELETE CASCADE, `association` keys are nullable with ON DELETE SET NULL.
 *   A relation naming an entity without a table compiles to nothing and is
 *   marked unresolved (the `relations-resolve` gate reports it);
 * - projections become views, see `compile-views.ts`.
 *
 * Never throws for an app whose entities have names; problems show up in
 * `buildSpec` or the structural gates.
 */
import { normalizeEntityName } from '../tasks/intent/names.ts';
import type { AppType, Cardinality, EntityRole, Projection, RelationKind } from '../tasks/intent/vocabulary.ts';
import type { AppField, AssembledApp } from './assembled-app.ts';
import { compileProjection } from './compile-views.ts';
import { defaultCardinality } from './create-assembled-app.ts';
import { TIME_FIELD_TYPES } from './pattern.ts';
import { entityBaseName, snakeCase, sqlString, tableNameForEntity, uniqueName } from './sql-names.ts';

export { buildSpec, type BuildResult } from './build-spec.ts';

/** What a column is for. */
export type ColumnOrigin = 'primary_key' | 'field' | 'foreign_key' | 'timestamp' | 'projection';

/** One column of a compiled table. */
export interface SpecColumn {
  name: string;
  /** SQL type name (`TEXT`, `INTEGER`, `DATETIME`, ...). */
  type: string;
  notNull: boolean;
  unique: boolean;
  /** Allowed values (a CHECK constraint). */
  values?: string[];
  /** SQL default expression. */
  defaultSql?: string;
  references?: { table: string; column: 'id'; onDelete: 'CASCADE' | 'SET NULL' };
  origin: ColumnOrigin;
}

/** One compiled table. */
export interface SpecTable {
  name: string;
  /** `entity`: one per app entity; `join`: made for a many-to-many relation. */
  kind: 'entity' | 'join';
  /** App entity name (entity tables). */
  entity?: string;
  role?: EntityRole;
  columns: SpecColumn[];
  /** Primary key columns: `['id']`, or the two foreign keys of a join table. */
  primaryKey: string[];
  /** First DATE/DATETIME column from a field (not `created_at`), if any. */
  timeColumn?: string;
}

/** How a relation was compiled. */
export type RelationImplementation =
  | { type: 'foreign_key'; table: string; column: string }
  | { type: 'join_table'; table: string };

/** One relation of the app and what it compiled to. */
export interface SpecRelation {
  from: string;
  to: string;
  cardinality: Cardinality;
  kind: RelationKind;
  fromTable?: string;
  toTable?: string;
  /** Both ends have tables and the relation was compiled. */
  resolved: boolean;
  implementation?: RelationImplementation;
}

/** One compiled view. */
export interface SpecView {
  name: string;
  projection: Projection;
  entity: string;
  table: string;
  sql: string;
}

/** One projection and where it lives (`form` projections have no view). */
export interface SpecProjection {
  kind: Projection;
  entity: string;
  /** Absent when the entity has no table. */
  table?: string;
  view?: string;
}

/** The compiled app specification. */
export interface AppSpecification {
  appType: AppType;
  tables: SpecTable[];
  relations: SpecRelation[];
  views: SpecView[];
  projections: SpecProjection[];
  /** Every DDL statement (tables, parents first when the keys allow, then views), each ending in `;`. */
  statements: string[];
  /** The full DDL text: the statements separated by blank lines. */
  sql: string;
  /** What the compiler added or could not do (added columns, unresolved relations). */
  notes: string[];
}

/** Compile an assembled app into a specification with its SQL DDL. */
export function compileApp(app: AssembledApp): AppSpecification {
  const tables = app.entities.map(entityTable);
  const state: CompileState = { tables, joinTables: [], notes: [], tableOf: entityTableLookup(tables) };
  const relations = app.relations.map((relation) => compileRelation(state, relation));
  const allTables = [...tables, ...state.joinTables];
  const views = compileViews(state, app, allTables);
  for (const table of allTables) table.columns.push(createdAtColumn());
  const statements = [...orderByDependencies(allTables).map(createTableSql), ...views.views.map((view) => view.sql)];
  return {
    appType: app.appType,
    tables: allTables,
    relations,
    views: views.views,
    projections: views.projections,
    statements,
    sql: statements.join('\n\n') + (statements.length > 0 ? '\n' : ''),
    notes: state.notes,
  };
}

/** What compiling one app accumulates: the entity tables, the join tables added, the notes. */
interface CompileState {
  tables: SpecTable[];
  joinTables: SpecTable[];
  notes: string[];
  tableOf: (entityName: string) => SpecTable | undefined;
}

type AppRelation = AssembledApp['relations'][number];

function entityTable(entity: AssembledApp['entities'][number]): SpecTable {
  return {
    name: tableNameForEntity(entity.name),
    kind: 'entity',
    entity: entity.name,
    role: entity.role,
    columns: [
      { name: 'id', type: 'INTEGER', notNull: false, unique: false, origin: 'primary_key' },
      ...entity.fields.map(fieldColumn),
    ],
    primaryKey: ['id'],
    ...timeColumnOf(entity.fields),
  };
}

/** The table of an entity by normalised name (the first table wins). */
function entityTableLookup(tables: readonly SpecTable[]): (entityName: string) => SpecTable | undefined {
  const tableByKey = new Map<string, SpecTable>();
  for (const table of tables) {
    const key = normalizeEntityName(table.entity ?? '');
    if (!tableByKey.has(key)) tableByKey.set(key, table);
  }
  return (entityName) => tableByKey.get(normalizeEntityName(entityName));
}

function compileRelation(state: CompileState, relation: AppRelation): SpecRelation {
  const kind = relation.kind;
  const cardinality = relation.cardinality ?? defaultCardinality(kind);
  const fromTable = state.tableOf(relation.from);
  const toTable = state.tableOf(relation.to);
  const compiled: SpecRelation = {
    from: relation.from,
    to: relation.to,
    cardinality,
    kind,
    ...(fromTable ? { fromTable: fromTable.name } : {}),
    ...(toTable ? { toTable: toTable.name } : {}),
    resolved: false,
  };
  if (fromTable === undefined || toTable === undefined) {
    state.notes.push(
      `relation ${relation.from} → ${relation.to} not compiled: no table for ${fromTable ? relation.to : relation.from}`,
    );
    return compiled;
  }
  compiled.implementation =
    cardinality === 'many_to_many'
      ? addJoinTable(state, relation, fromTable, toTable)
      : addForeignKey(relation, cardinality, fromTable, toTable);
  compiled.resolved = true;
  return compiled;
}

function addJoinTable(
  state: CompileState,
  relation: AppRelation,
  fromTable: SpecTable,
  toTable: SpecTable,
): RelationImplementation {
  const self = fromTable === toTable;
  const fromBase = entityBaseName(relation.from);
  const toBase = entityBaseName(relation.to);
  const taken = new Set([...state.tables, ...state.joinTables].map((table) => table.name));
  const name = uniqueName(self ? `${fromBase}_link` : `${fromBase}_${toBase}`, taken);
  const first = `${fromBase}_id`;
  const second = self ? `related_${toBase}_id` : `${toBase}_id`;
  state.joinTables.push({
    name,
    kind: 'join',
    columns: [
      {
        name: first,
        type: 'INTEGER',
        notNull: true,
        unique: false,
        references: { table: fromTable.name, column: 'id', onDelete: 'CASCADE' },
        origin: 'foreign_key',
      },
      {
        name: second,
        type: 'INTEGER',
        notNull: true,
        unique: false,
        references: { table: toTable.name, column: 'id', onDelete: 'CASCADE' },
        origin: 'foreign_key',
      },
    ],
    primaryKey: [first, second],
  });
  return { type: 'join_table', table: name };
}

function addForeignKey(
  relation: AppRelation,
  cardinality: Cardinality,
  fromTable: SpecTable,
  toTable: SpecTable,
): RelationImplementation {
  const kind = relation.kind;
  const self = fromTable === toTable;
  const strong = kind === 'composition' || kind === 'is_a';
  const onDelete = strong ? 'CASCADE' : 'SET NULL';
  // Which table holds the key, and which it points to.
  const keyOnFrom = cardinality === 'many_to_one' || (cardinality === 'one_to_one' && kind === 'is_a');
  const holder = keyOnFrom ? fromTable : toTable;
  const target = keyOnFrom ? toTable : fromTable;
  const targetEntity = keyOnFrom ? relation.to : relation.from;
  const base = self ? `parent_${entityBaseName(targetEntity)}_id` : `${entityBaseName(targetEntity)}_id`;
  const column = uniqueName(base, new Set(holder.columns.map((existing) => existing.name)));
  holder.columns.push({
    name: column,
    type: 'INTEGER',
    notNull: strong && !self, // a self key is nullable: the root has no parent
    unique: cardinality === 'one_to_one',
    references: { table: target.name, column: 'id', onDelete },
    origin: 'foreign_key',
  });
  return { type: 'foreign_key', table: holder.name, column };
}

function compileViews(state: CompileState, app: AssembledApp, allTables: readonly SpecTable[]): SpecCompiledViews {
  const views: SpecCompiledViews = { views: [], projections: [] };
  for (const projection of app.projections) {
    const table = state.tableOf(projection.entity);
    if (table === undefined) {
      views.projections.push({ kind: projection.kind, entity: projection.entity });
      state.notes.push(`projection ${projection.kind} of ${projection.entity} not compiled: no table`);
      continue;
    }
    const taken = new Set([...allTables.map((existing) => existing.name), ...views.views.map((view) => view.name)]);
    const compiled = compileProjection(projection, table, {
      taken,
      notes: state.notes,
      tableNamed: (name) => allTables.find((candidate) => candidate.name === name),
    });
    views.projections.push({
      kind: projection.kind,
      entity: projection.entity,
      table: table.name,
      ...(compiled ? { view: compiled.name } : {}),
    });
    if (compiled !== undefined) views.views.push(compiled);
  }
  return views;
}

function createdAtColumn(): SpecColumn {
  return {
    name: 'created_at',
    type: 'DATETIME',
    notNull: true,
    unique: false,
    defaultSql: 'CURRENT_TIMESTAMP',
    origin: 'timestamp',
  };
}

interface SpecCompiledViews {
  views: SpecView[];
  projections: SpecProjection[];
}

/** The `CREATE TABLE` statement of one table. */
export function createTableSql(table: SpecTable): string {
  const compositeKey = table.primaryKey.length > 1;
  const lines = table.columns.map(
    (column) => `  ${columnSql(column, !compositeKey && table.primaryKey.includes(column.name))}`,
  );
  if (compositeKey) lines.push(`  PRIMARY KEY (${table.primaryKey.join(', ')})`);
  return `CREATE TABLE ${table.name} (\n${lines.join(',\n')}\n);`;
}

function columnSql(column: SpecColumn, primaryKey: boolean): string {
  const parts = [column.name, column.type];
  if (primaryKey) parts.push('PRIMARY KEY');
  if (column.notNull) parts.push('NOT NULL');
  if (column.unique) parts.push('UNIQUE');
  if (column.defaultSql !== undefined) parts.push(`DEFAULT ${column.defaultSql}`);
  if (column.values !== undefined) parts.push(`CHECK (${column.name} IN (${column.values.map(sqlString).join(', ')}))`);
  if (column.references !== undefined) {
    parts.push(
      `REFERENCES ${column.references.table}(${column.references.column}) ON DELETE ${column.references.onDelete}`,
    );
  }
  return parts.join(' ');
}

function fieldColumn(field: AppField): SpecColumn {
  return {
    name: snakeCase(field.name),
    type: field.type,
    notNull: field.required,
    unique: field.unique,
    ...(field.values !== undefined ? { values: [...field.values] } : {}),
    ...(field.values !== undefined && field.required && field.values[0] !== undefined
      ? { defaultSql: sqlString(field.values[0]) }
      : {}),
    origin: 'field',
  };
}

function timeColumnOf(fields: readonly AppField[]): { timeColumn?: string } {
  const field = fields.find((candidate) => TIME_FIELD_TYPES.has(candidate.type));
  return field === undefined ? {} : { timeColumn: snakeCase(field.name) };
}

/** Tables with the tables they reference first, when there is no cycle; otherwise the given order. */
function orderByDependencies(tables: readonly SpecTable[]): SpecTable[] {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const ordered: SpecTable[] = [];
  const state = new Map<SpecTable, 'visiting' | 'done'>();
  const visit = (table: SpecTable): void => {
    if (state.has(table)) return; // done, or a cycle: keep the order reached so far
    state.set(table, 'visiting');
    for (const column of table.columns) {
      const target = column.references === undefined ? undefined : byName.get(column.references.table);
      if (target !== undefined && target !== table) visit(target);
    }
    state.set(table, 'done');
    ordered.push(table);
  };
  tables.forEach(visit);
  return ordered;
}
