/**
 * Projections → SQL views. Each view is named `v_<table>_<kind>` (made unique
 * when needed). `form` projections have no view. Columns a projection needs
 * but the table lacks are added to the table and noted:
 *
 * | kind      | view                                                              | adds when missing          |
 * |-----------|-------------------------------------------------------------------|----------------------------|
 * | list      | every column, newest first                                        |                            |
 * | detail    | every column plus the label of each referenced parent             |                            |
 * | calendar  | id, title, starts_at, ends_at, day over the time column           | `starts_at DATETIME`       |
 * | kanban    | lane (= status), id, title, created_at, ordered by lane           | `status TEXT` (new/…/done) |
 * | dashboard | per day of creation: total rows and the sum of the first amount   |                            |
 * | timeline  | id, title, occurred_at (time column, else created_at), latest first |                          |
 * | map       | id, title, latitude, longitude where both are known               | `latitude`, `longitude`    |
 * | gallery   | id, title, image_url                                              | `image_url TEXT`           |
 *
 * The title is the first of `name`, `title`, `subject`, else the first TEXT
 * field that is neither an enumeration nor free text (notes, description, ...),
 * else the id as text.
 */
import type { AppProjection } from './assembled-app.ts';
import type { SpecColumn, SpecTable, SpecView } from './compile.ts';
import { sqlString, uniqueName } from './sql-names.ts';

/** Lanes given to a `status` column added for a kanban. */
export const DEFAULT_KANBAN_LANES: readonly string[] = Object.freeze(['new', 'in_progress', 'done']);

/** What {@link compileProjection} needs beyond the projection and its table. */
export interface ProjectionContext {
  /** Table and view names already used. */
  taken: ReadonlySet<string>;
  /** Receives a line per added column. */
  notes: string[];
  /** Any table of the spec by name (for parent labels in detail views). */
  tableNamed: (name: string) => SpecTable | undefined;
}

/** Compile one projection on its table; `undefined` for a `form`. May add columns to `table`. */
export function compileProjection(
  projection: AppProjection,
  table: SpecTable,
  context: ProjectionContext,
): SpecView | undefined {
  if (projection.kind === 'form') return undefined;
  const name = uniqueName(`v_${table.name}_${projection.kind}`, context.taken);
  // The title is read before any column is added for the projection.
  const title = labelExpression(table);
  const select = projectionSelect(projection.kind, table, title, context);
  return {
    name,
    projection: projection.kind,
    entity: projection.entity,
    table: table.name,
    sql: `CREATE VIEW ${name} AS\n  ${select};`,
  };
}

/** The `SELECT` of a projection's view; may add the columns it needs to `table`. */
function projectionSelect(
  kind: Exclude<AppProjection['kind'], 'form'>,
  table: SpecTable,
  title: string,
  context: ProjectionContext,
): string {
  const t = table.name;
  switch (kind) {
    case 'list':
      return `SELECT * FROM ${t} ORDER BY created_at DESC, id DESC`;
    case 'detail':
      return detailSelect(table, context.tableNamed);
    case 'calendar':
      return calendarSelect(table, title, context.notes);
    case 'kanban':
      return kanbanSelect(table, title, context.notes);
    case 'dashboard':
      return dashboardSelect(table);
    case 'timeline': {
      const time = table.timeColumn ?? 'created_at';
      return `SELECT id, ${title} AS title, ${time} AS occurred_at FROM ${t} ORDER BY ${time} DESC, id DESC`;
    }
    case 'map':
      return mapSelect(table, title, context.notes);
    case 'gallery':
      return gallerySelect(table, title, context.notes);
  }
}

function calendarSelect(table: SpecTable, title: string, notes: string[]): string {
  const start =
    table.timeColumn ??
    addColumn(
      table,
      { name: 'starts_at', type: 'DATETIME', notNull: false, unique: false, origin: 'projection' },
      'calendar',
      notes,
    );
  table.timeColumn ??= start;
  const end = timeColumns(table).find((column) => column !== start) ?? start;
  return `SELECT id, ${title} AS title, ${start} AS starts_at, ${end} AS ends_at, date(${start}) AS day FROM ${table.name} WHERE ${start} IS NOT NULL ORDER BY ${start}`;
}

function kanbanSelect(table: SpecTable, title: string, notes: string[]): string {
  let status = table.columns.find((column) => column.name === 'status');
  if (status === undefined) {
    status = {
      name: 'status',
      type: 'TEXT',
      notNull: true,
      unique: false,
      values: [...DEFAULT_KANBAN_LANES],
      defaultSql: sqlString(DEFAULT_KANBAN_LANES[0]!),
      origin: 'projection',
    };
    addColumn(table, status, 'kanban', notes);
  }
  const lanes = status.values ?? [];
  const laneOrder =
    lanes.length > 0
      ? `CASE status ${lanes.map((lane, index) => `WHEN ${sqlString(lane)} THEN ${index}`).join(' ')} ELSE ${lanes.length} END, `
      : '';
  return `SELECT status AS lane, id, ${title} AS title, created_at FROM ${table.name} ORDER BY ${laneOrder}status, created_at`;
}

function dashboardSelect(table: SpecTable): string {
  const amount = table.columns.find(
    (column) => column.origin === 'field' && (column.type === 'NUMERIC' || column.type === 'REAL'),
  );
  const sum = amount === undefined ? '' : `, sum(${amount.name}) AS sum_${amount.name}`;
  return `SELECT date(created_at) AS day, count(*) AS total${sum} FROM ${table.name} GROUP BY date(created_at) ORDER BY day`;
}

function mapSelect(table: SpecTable, title: string, notes: string[]): string {
  for (const coordinate of ['latitude', 'longitude']) {
    if (!table.columns.some((column) => column.name === coordinate)) {
      addColumn(
        table,
        { name: coordinate, type: 'REAL', notNull: false, unique: false, origin: 'projection' },
        'map',
        notes,
      );
    }
  }
  return `SELECT id, ${title} AS title, latitude, longitude FROM ${table.name} WHERE latitude IS NOT NULL AND longitude IS NOT NULL`;
}

function gallerySelect(table: SpecTable, title: string, notes: string[]): string {
  const image =
    table.columns.find((column) => /(image|photo|picture|thumbnail)_url$/.test(column.name))?.name ??
    table.columns.find((column) => column.name === 'file_url')?.name ??
    addColumn(
      table,
      { name: 'image_url', type: 'TEXT', notNull: false, unique: false, origin: 'projection' },
      'gallery',
      notes,
    );
  return `SELECT id, ${title} AS title, ${image} AS image_url FROM ${table.name}`;
}

function addColumn(table: SpecTable, column: SpecColumn, kind: string, notes: string[]): string {
  table.columns.push(column);
  notes.push(`added ${table.name}.${column.name} for the ${kind} projection`);
  return column.name;
}

function timeColumns(table: SpecTable): string[] {
  return table.columns
    .filter((column) => column.type === 'DATE' || column.type === 'DATETIME')
    .map((column) => column.name);
}

/** The SQL expression used as a row's title (see the module comment). */
function labelExpression(table: SpecTable, alias?: string): string {
  const column = labelColumn(table);
  const prefix = alias === undefined ? '' : `${alias}.`;
  return column === undefined ? `CAST(${prefix}id AS TEXT)` : `${prefix}${column}`;
}

/** Long or free-text columns that make poor titles. */
const FREE_TEXT_COLUMNS = new Set([
  'description',
  'notes',
  'note',
  'body',
  'comment',
  'content',
  'summary',
  'bio',
  'feedback',
]);

function labelColumn(table: SpecTable): string | undefined {
  const text = table.columns.filter((column) => column.origin === 'field' && column.type === 'TEXT');
  for (const preferred of ['name', 'title', 'subject']) {
    if (text.some((column) => column.name === preferred)) return preferred;
  }
  return text.find((column) => column.values === undefined && !FREE_TEXT_COLUMNS.has(column.name))?.name;
}

function detailSelect(table: SpecTable, tableNamed: (name: string) => SpecTable | undefined): string {
  const joins: string[] = [];
  const extra: string[] = [];
  const taken = new Set(table.columns.map((column) => column.name));
  for (const column of table.columns) {
    if (column.references === undefined) continue;
    const alias = `p${joins.length + 1}`;
    joins.push(`LEFT JOIN ${column.references.table} AS ${alias} ON ${alias}.id = t.${column.name}`);
    const label = uniqueName(`${column.name.replace(/_id$/, '')}_label`, taken);
    taken.add(label);
    const parent = tableNamed(column.references.table);
    extra.push(`${parent === undefined ? `CAST(${alias}.id AS TEXT)` : labelExpression(parent, alias)} AS ${label}`);
  }
  return [`SELECT t.*${extra.map((expression) => `, ${expression}`).join('')} FROM ${table.name} AS t`, ...joins].join(
    ' ',
  );
}
