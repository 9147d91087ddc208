/**
 * PostgreSQL for the tests: the server of `KLOOP_TEST_POSTGRES_URL` (default
 * `postgres://postgres@127.0.0.1:5432/test`), one fresh schema per test file
 * (created by {@link createTestSchema}, dropped with everything in it by the
 * returned `drop`), so test files running at once never see each other's
 * tables or jobs.
 *
 * Without a server the PostgreSQL half of the storage tests is skipped, and
 * the global set-up (src/test-support/postgres-global-setup.ts) says so once,
 * with how to run it. With `KLOOP_REQUIRE_POSTGRES=1` (CI: .ci/run) a missing
 * server fails the run instead.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server the tests use. */
export const POSTGRES_TEST_URL = process.env.KLOOP_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** True when the run must have PostgreSQL (`KLOOP_REQUIRE_POSTGRES=1`). */
export const POSTGRES_REQUIRED = process.env.KLOOP_REQUIRE_POSTGRES === '1';

/** What to do without a server, for the skip message. */
export const POSTGRES_HOW_TO_RUN =
  `start PostgreSQL on 127.0.0.1:5432 with a database "test" the user "postgres" may use (or set KLOOP_TEST_POSTGRES_URL), then run npm test again; ` +
  'KLOOP_REQUIRE_POSTGRES=1 (as .ci/run sets it) makes a missing server a failure';

/** Why the server cannot be used, or undefined when it can. */
export async function postgresUnavailableReason(url = POSTGRES_TEST_URL): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return `${(error as Error).message || (error as { code?: string }).code || 'unknown error'} (${url})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

let availability: Promise<boolean> | undefined;

/**
 * True when the PostgreSQL half runs: a server answers. Without one, false —
 * or, with `KLOOP_REQUIRE_POSTGRES=1`, an error that fails the test file.
 */
export function postgresAvailable(): Promise<boolean> {
  availability ??= postgresUnavailableReason().then((reason) => {
    if (reason === undefined) return true;
    if (POSTGRES_REQUIRED)
      throw new Error(`KLOOP_REQUIRE_POSTGRES=1 but PostgreSQL cannot be reached: ${reason}; ${POSTGRES_HOW_TO_RUN}`);
    return false;
  });
  return availability;
}

/** A fresh schema on the test server: its storage URL (`…?schema=NAME`), and `drop` removing it (and its job queue's schema) with everything in them. */
export interface TestSchema {
  url: string;
  schema: string;
  drop(): Promise<void>;
}

/** Creates a schema `kloop_t_<random>` for one test file (or one test). */
export async function createTestSchema(): Promise<TestSchema> {
  const schema = `kloop_t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
  } finally {
    await client.end();
  }
  const separator = POSTGRES_TEST_URL.includes('?') ? '&' : '?';
  return {
    url: `${POSTGRES_TEST_URL}${separator}schema=${schema}`,
    schema,
    async drop() {
      const cleaner = new pg.Client({ connectionString: POSTGRES_TEST_URL });
      await cleaner.connect();
      try {
        await cleaner.query(`drop schema if exists ${schema} cascade`);
        await cleaner.query(`drop schema if exists ${schema}_queue cascade`);
      } finally {
        await cleaner.end();
      }
    },
  };
}
