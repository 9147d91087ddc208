/**
 * Build check: run a specification's DDL in a fresh in-memory SQLite database
 * (better-sqlite3, `PRAGMA foreign_keys = ON`) and report success or the
 * SQLite error. A failure is a result, never a thrown exception.
 *
 * SQLite accepts a foreign key to a missing table and a view over a missing
 * table at CREATE time, so after the statements run the build also checks
 * that every foreign key's target table exists (`PRAGMA foreign_key_list`)
 * and that every view can be prepared (`SELECT * FROM view LIMIT 0`).
 */
import Database from 'better-sqlite3';
import type { AppSpecification } from './compile.ts';

/** The outcome of {@link buildSpec}. */
export type BuildResult =
  | { ok: true; tables: number; views: number }
  | {
      ok: false;
      error: {
        message: string;
        /** SQLite error code such as `SQLITE_ERROR`, when SQLite raised it. */
        code?: string;
        /** 0-based index into `spec.statements` of the statement that failed. */
        statementIndex?: number;
        statement?: string;
        /** Which step failed. */
        stage: 'open' | 'statement' | 'foreign_keys' | 'views';
      };
    };

type Failure = Extract<BuildResult, { ok: false }>['error'];

/** Build a specification in a throw-away in-memory database. */
export function buildSpec(spec: Pick<AppSpecification, 'statements'>): BuildResult {
  let database: Database.Database;
  try {
    database = new Database(':memory:');
    database.pragma('foreign_keys = ON');
  } catch (error) {
    return fail({ stage: 'open', ...describe(error) });
  }
  try {
    for (const [statementIndex, statement] of spec.statements.entries()) {
      try {
        database.exec(statement);
      } catch (error) {
        return fail({ stage: 'statement', statementIndex, statement, ...describe(error) });
      }
    }
    const objects = database
      .prepare("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'")
      .all() as { name: string; type: 'table' | 'view' }[];
    const tables = new Set(
      objects.filter((object) => object.type === 'table').map((object) => object.name.toLowerCase()),
    );
    for (const object of objects) {
      if (object.type !== 'table') continue;
      const keys = database.pragma(`foreign_key_list(${quote(object.name)})`) as { table: string; from: string }[];
      for (const key of keys) {
        if (!tables.has(key.table.toLowerCase())) {
          return fail({
            stage: 'foreign_keys',
            message: `foreign key ${object.name}.${key.from} references missing table ${key.table}`,
          });
        }
      }
    }
    for (const object of objects) {
      if (object.type !== 'view') continue;
      try {
        database.prepare(`SELECT * FROM ${quote(object.name)} LIMIT 0`).all();
      } catch (error) {
        const { message, code } = describe(error);
        return fail({ stage: 'views', message: `view ${object.name}: ${message}`, ...(code ? { code } : {}) });
      }
    }
    return { ok: true, tables: tables.size, views: objects.length - tables.size };
  } catch (error) {
    return fail({ stage: 'statement', ...describe(error) });
  } finally {
    database.close();
  }
}

function fail(error: Failure): BuildResult {
  return { ok: false, error };
}

function describe(error: unknown): { message: string; code?: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? { message: error.message, code } : { message: error.message };
  }
  return { message: String(error) };
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
