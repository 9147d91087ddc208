/**
 * Global set-up of both test projects: says once, before any test file runs,
 * whether the PostgreSQL half of the storage tests runs (src/test-support/postgres.ts).
 * Without a server it prints that the half was not run and how to run it;
 * with `KLOOP_REQUIRE_POSTGRES=1` (.ci/run) it fails the run instead.
 */
import { POSTGRES_HOW_TO_RUN, POSTGRES_REQUIRED, POSTGRES_TEST_URL, postgresUnavailableReason } from './postgres.ts';

export default async function setup(): Promise<void> {
  const reason = await postgresUnavailableReason();
  if (reason === undefined) return;
  if (POSTGRES_REQUIRED)
    throw new Error(
      `KLOOP_REQUIRE_POSTGRES=1 but PostgreSQL cannot be reached at ${POSTGRES_TEST_URL}: ${reason}. ${POSTGRES_HOW_TO_RUN}`,
    );
  process.stderr.write(
    `\nkloop tests: the PostgreSQL half of the storage tests was NOT run: ${reason}.\n  To run it: ${POSTGRES_HOW_TO_RUN}.\n\n`,
  );
}
