/**
 * Kysely's PostgreSQL introspector, narrowed to the study's own schema.
 *
 * Kysely's migrator asks `getTables()` whether its migration table exists,
 * and the stock introspector answers by reading every schema of the database
 * with `pg_get_serial_sequence(schema.table, column)` per column. When another
 * process drops a schema during that read (another study reset, or a test
 * file's schema dropped at the end of the file), the function fails with
 * `3F000 schema "…" does not exist` and the migration of an unrelated study
 * fails with it. A study only ever needs its own tables, so this introspector
 * reads `information_schema` for the study's schema alone, and what happens
 * to other schemas can no longer fail it.
 */
import type { DatabaseMetadataOptions, Kysely, TableMetadata } from 'kysely';
import { PostgresIntrospector, sql } from 'kysely';

interface ColumnRow {
  table_name: string;
  table_type: string;
  column_name: string;
  udt_name: string;
  udt_schema: string;
  is_nullable: string;
  column_default: string | null;
}

/** {@link PostgresIntrospector} whose `getTables` sees only `schema` (its tables and views, with their columns). */
export class SchemaPostgresIntrospector extends PostgresIntrospector {
  readonly #db: Kysely<unknown>;
  readonly #schema: string;

  constructor(db: Kysely<unknown>, schema: string) {
    super(db);
    this.#db = db;
    this.#schema = schema;
  }

  override async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const result = await sql<ColumnRow>`
      select c.table_name, t.table_type, c.column_name, c.udt_name, c.udt_schema, c.is_nullable, c.column_default
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = ${this.#schema}
      order by c.table_name, c.ordinal_position`.execute(this.#db);
    const tables = new Map<
      string,
      { name: string; isView: boolean; schema: string; columns: TableMetadata['columns'][number][] }
    >();
    for (const row of result.rows) {
      if (options.withInternalKyselyTables !== true && row.table_name.startsWith('kysely_')) continue;
      let table = tables.get(row.table_name);
      if (table === undefined) {
        table = { name: row.table_name, isView: row.table_type === 'VIEW', schema: this.#schema, columns: [] };
        tables.set(row.table_name, table);
      }
      const defaultValue = row.column_default ?? '';
      table.columns.push({
        name: row.column_name,
        dataType: row.udt_name,
        dataTypeSchema: row.udt_schema,
        isNullable: row.is_nullable === 'YES',
        isAutoIncrementing: defaultValue.startsWith('nextval('),
        hasDefaultValue: row.column_default !== null,
      });
    }
    return [...tables.values()];
  }
}
