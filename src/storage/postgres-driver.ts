/**
 * Kysely's PostgreSQL driver as kloop's study database needs it
 * (src/storage/postgres.ts):
 *
 * - **The writer lock.** A write transaction begins by taking the study's
 *   writer lock (`pg_advisory_xact_lock` of the schema, under the busy
 *   timeout), as SQLite's `BEGIN IMMEDIATE` takes its write lock.
 * - **Through short outages.** A statement outside a transaction whose
 *   connection was lost (the server restarted, the network cut: reset,
 *   terminated, refused) is run again on a new connection, with back-off,
 *   for up to the URL's `connect_timeout` (default 60 s:
 *   src/storage/connections.ts `retryThroughOutage`) — kloop's statements
 *   outside transactions are reads, keyed inserts ("insert or nothing") and
 *   heartbeats, which may run twice. A transaction whose connection was lost
 *   is not re-run (its caller cannot know what it read): it fails, as does a
 *   statement whose database stayed away past the wait, with an
 *   {@link InfrastructureError} (code `infrastructure.database`): a run then
 *   stops `infrastructure_failure`, with its report, instead of crashing.
 */
import type { DatabaseConnection, QueryResult, TransactionSettings } from 'kysely';
import { CompiledQuery, PostgresDriver } from 'kysely';
import type { StorageTarget } from './location.ts';
import { databaseLostError, isConnectionLoss, retryThroughOutage } from './connections.ts';
import { createHash } from 'node:crypto';

type PostgresTarget = Extract<StorageTarget, { kind: 'postgres' }>;
/** Kysely's own PostgreSQL connection (what the base driver's methods take). */
type PgConnection = Parameters<PostgresDriver['releaseConnection']>[0];

/** The two 32-bit keys of the study's writer lock (`pg_advisory_xact_lock(int, int)`), from the schema name. */
export function writerLockKeys(schema: string): [number, number] {
  const digest = createHash('sha256').update(`kloop study writer lock\u0000${schema}`).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}

/** A pooled connection that is replaced, and its statement run again, when it is lost outside a transaction. */
class ResilientConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(
    public inner: DatabaseConnection,
    private readonly driver: StudyPostgresDriver,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction) {
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (error) {
        throw isConnectionLoss(error)
          ? databaseLostError(this.driver.target, error, 'the connection was lost in the middle of a transaction')
          : error;
      }
    }
    let first = true;
    return retryThroughOutage(this.driver.target, async () => {
      if (!first) await this.driver.replace(this);
      first = false;
      return this.inner.executeQuery<R>(query);
    });
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/** See the module comment. */
export class StudyPostgresDriver extends PostgresDriver {
  readonly #begin: string;
  readonly target: PostgresTarget;

  constructor(config: ConstructorParameters<typeof PostgresDriver>[0], target: PostgresTarget, busyTimeoutMs: number) {
    super(config);
    this.target = target;
    const [high, low] = writerLockKeys(target.schema);
    this.#begin = `begin; set local lock_timeout = ${Math.max(1, Math.round(busyTimeoutMs))}; select pg_advisory_xact_lock(${high}, ${low})`;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    return new ResilientConnection(await retryThroughOutage(this.target, () => super.acquireConnection()), this);
  }

  /** Gives a lost connection back (the pool drops it) and takes a new one. */
  async replace(connection: ResilientConnection): Promise<void> {
    await super.releaseConnection(connection.inner as PgConnection);
    connection.inner = await super.acquireConnection();
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await super.releaseConnection((connection as ResilientConnection).inner as PgConnection);
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const resilient = connection as ResilientConnection;
    if (settings.accessMode === 'read only' || settings.isolationLevel !== undefined)
      await super.beginTransaction(resilient, settings);
    else {
      try {
        await resilient.executeQuery(CompiledQuery.raw(this.#begin));
      } catch (error) {
        // The lock was not granted (busy) or the connection failed: end the transaction begun, so the pooled connection is clean.
        await resilient.inner.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined);
        throw error;
      }
    }
    resilient.inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const resilient = connection as ResilientConnection;
    try {
      await super.commitTransaction(resilient);
    } finally {
      resilient.inTransaction = false;
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const resilient = connection as ResilientConnection;
    try {
      await super.rollbackTransaction(resilient.inner as PgConnection);
    } catch (error) {
      // A session that ended has been rolled back by the server: the transaction's own failure is what its caller reports.
      if (!isConnectionLoss(error)) throw error;
    } finally {
      resilient.inTransaction = false;
    }
  }
}
