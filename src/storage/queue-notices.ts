/**
 * graphile-worker's migration notices, per queue schema.
 *
 * graphile-worker announces each migration of a queue schema on the
 * database-wide channel `worker:migrate`, and every runner listening in that
 * database — whatever its schema — shuts down on a "breaking" one
 * (`detected breaking migration`, exit code 57). kloop keeps one queue schema
 * per study (`<study schema>_queue`): without a filter, the first
 * `kloop run --workers` of a new study (installing its queue schema, whose
 * first migrations are breaking ones) stopped every other study's workers,
 * and their coordinators then waited for ever (graphile-worker's notices are
 * not schema-qualified).
 *
 * {@link ignoreForeignMigrationNotices} lets a worker pool see a breaking
 * notice only when its own queue schema holds a migration newer than the
 * ones it found when it started (another kloop, with a newer
 * graphile-worker, migrated this study's queue: shutting down is then the
 * safe thing, as graphile-worker intends). A notice about another schema is
 * dropped.
 */
import type pg from 'pg';

/** graphile-worker's channel of migration notices. */
export const MIGRATION_CHANNEL = 'worker:migrate';

/** The handle of {@link ignoreForeignMigrationNotices}. */
export interface MigrationNoticeFilter {
  /** Records the queue schema's latest migration (call once the runner has migrated it). */
  ready(): Promise<void>;
}

/**
 * Filters the `worker:migrate` notices of every client of `pool` (see the
 * module comment). Install before the runner takes its listening client.
 *
 * @param queueSchema the study's queue schema
 * @param log told when a notice is let through (the runner then stops)
 */
export function ignoreForeignMigrationNotices(
  pool: pg.Pool,
  queueSchema: string,
  log?: (message: string) => void,
): MigrationNoticeFilter {
  let known: number | undefined;
  const latest = async (): Promise<number> =>
    Number(
      (await pool.query<{ latest: number | null }>(`select max(id) as latest from ${queueSchema}.migrations`)).rows[0]
        ?.latest ?? 0,
    );
  pool.on('connect', (client: pg.PoolClient) => {
    const emit = client.emit.bind(client);
    client.emit = ((event: string | symbol, ...args: unknown[]): boolean => {
      const message = args[0] as { channel?: string; payload?: string } | undefined;
      if (event !== 'notification' || message?.channel !== MIGRATION_CHANNEL) return emit(event, ...args);
      // While starting (known undefined) the notices are this runner's own migrations.
      if (known === undefined) return true;
      const before = known;
      void latest()
        .then((now) => {
          if (now <= before) return;
          log?.(
            `the job queue ${queueSchema} was migrated to revision ${now} by another process (this worker knows ${before}): stopping, as it is not safe to go on`,
          );
          emit(event, ...args);
        })
        .catch(() => undefined);
      return true;
    }) as typeof client.emit;
  });
  return {
    async ready() {
      known = await latest();
    },
  };
}
