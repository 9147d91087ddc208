/**
 * The column types a migration uses on each backend (src/storage/migrations.ts).
 */
import type { ColumnDataType, ColumnDefinitionBuilder, Expression, Kysely } from 'kysely';
import { sql } from 'kysely';
import { isPostgresDatabase } from './is-postgres-database.ts';

// Migrations operate on an unknown schema by design (Kysely's guidance).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDatabase = Kysely<any>;

/** A column type: a name or an SQL expression. */
type DataTypeExpression = ColumnDataType | Expression<unknown>;

/**
 * The column types of a migration on each backend, so that one migration
 * runs on both with the same meaning:
 *
 * | use | SQLite | PostgreSQL |
 * |---|---|---|
 * | generated id (`t.id` + `t.primaryId`) | `integer primary key autoincrement` | `serial primary key` |
 * | text, JSON text (`t.text`) | `text` | `text collate "C"` (byte order, as SQLite compares) |
 * | real (`t.real`) | `real` (8 bytes) | `double precision` (PostgreSQL's `real` has 4) |
 *
 * Booleans stay integers 0/1 on both (the code reads and writes 0 and 1),
 * and JSON stays text (what the code reads back is the text it wrote).
 */
export function columnTypes(db: AnyDatabase): {
  id: DataTypeExpression;
  primaryId: (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  text: DataTypeExpression;
  real: DataTypeExpression;
} {
  if (isPostgresDatabase(db))
    return {
      id: 'serial',
      primaryId: (column) => column.primaryKey(),
      text: sql`text collate "C"`,
      real: 'double precision',
    };
  return { id: 'integer', primaryId: (column) => column.primaryKey().autoIncrement(), text: 'text', real: 'real' };
}
