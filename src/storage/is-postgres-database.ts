/**
 * Which backend a Kysely database is on, without loading the PostgreSQL
 * driver (`pg`, loaded with src/storage/postgres.ts only when a study keeps
 * its notebook in PostgreSQL).
 */
import type { Kysely } from 'kysely';
import { PostgresIntrospector } from 'kysely';

/** True when `db` is a PostgreSQL database (or a transaction on one). */
export function isPostgresDatabase(db: Kysely<any>): boolean {
  return db.introspection instanceof PostgresIntrospector;
}
