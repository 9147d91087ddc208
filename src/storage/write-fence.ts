/**
 * Fencing: a process that lost the study's lease cannot write.
 *
 * A run holds the study's lease (src/storage/lease.ts) and renews it with a
 * heartbeat. Paused long enough (a GC pause, a suspended VM, SIGSTOP) it looks
 * dead, and another run takes the lease over; when the first one goes on, it
 * must not write one more row. Each lease row carries a fencing token, its
 * `generation`, incremented at every take-over (Kleppmann, "How to do
 * distributed locking", 2016). Once a process holds the lease on a database
 * connection ({@link fenceWrites}, which `acquireLease` calls), every write
 * through that connection checks, inside its own transaction, that the lease
 * row still names this owner and this generation:
 *
 * - a write transaction checks right after its `BEGIN` (SQLite's
 *   `BEGIN IMMEDIATE` and PostgreSQL's study writer lock serialise it with a
 *   take-over, which is a write transaction too), and rolls back when the
 *   lease is no longer its own;
 * - a write outside a transaction (an `insert`, `update` or `delete` run on
 *   its own) is run inside one, with the same check.
 *
 * - a write whose connection was lost (on PostgreSQL, the server ends the
 *   session of a process paused inside a transaction for the lease's
 *   staleness: src/storage/postgres.ts) reads the lease again on a new
 *   connection: taken over, the write fails with {@link LeaseLostError}, the
 *   run's one report of a lost lease, not as a lost database.
 *
 * The check sits in the database driver, the one place every query of the
 * connection goes through, so no call site can forget it. A refused write
 * throws {@link LeaseLostError} (exit code {@link LEASE_LOST_EXIT_CODE}, code
 * `lease_lost`) and nothing of its transaction is written. Reads are never
 * checked; connections that hold no lease (readers, workers, the heartbeat's
 * own) are never fenced.
 */
import { CompiledQuery } from 'kysely';
import type { DatabaseConnection, Driver, Kysely, QueryResult, TransactionSettings } from 'kysely';
import { KloopError } from '../errors.ts';
import { isConnectionLoss } from './connections.ts';

/** Exit code of a run stopped because another process took its lease over (its writes are refused from then on). */
export const LEASE_LOST_EXIT_CODE = 5;

/** The lease a connection's writes are fenced by. */
export interface WriteFence {
  /** The lease row's key (as stored: `leaseKeyOf`). */
  studyKey: string;
  ownerId: string;
  /** The fencing token: the lease's generation when this process took it. */
  generation: number;
}

/** A write refused because the lease it was fenced by is no longer this process's. Nothing of the write's transaction was kept. */
export class LeaseLostError extends KloopError {
  readonly fence: WriteFence;

  constructor(fence: WriteFence, message?: string) {
    super(
      message ??
        `this run lost the study's lease (generation ${fence.generation}) to another process while it looked dead (paused, or its heartbeat could not reach the database): its writes are refused from then on, and nothing was written after the take-over; the process that took the lease over continues the study`,
      { code: 'lease_lost', exitCode: LEASE_LOST_EXIT_CODE },
    );
    this.fence = fence;
  }
}

/** True for an error that is, or wraps, a {@link LeaseLostError}. */
export function isLeaseLost(error: unknown): error is LeaseLostError {
  for (
    let current = error, depth = 0;
    current instanceof Error && depth < 5;
    current = (current as { cause?: unknown }).cause, depth += 1
  ) {
    if (current instanceof LeaseLostError) return true;
  }
  return false;
}

/** The fences of one database connection (one Kysely instance): one per lease it holds. */
export class FenceHolder {
  readonly fences = new Map<string, WriteFence>();
  /** How the check's parameters are written: `?` (SQLite) or `$n` (PostgreSQL). */
  readonly placeholder: (index: number) => string;

  constructor(placeholder: (index: number) => string) {
    this.placeholder = placeholder;
  }
}

const holders = new WeakMap<object, FenceHolder>();

/** Registers the holder of a database's fences (src/storage/database.ts and postgres.ts, when they open it). */
export function registerFenceHolder(db: Kysely<any>, holder: FenceHolder): void {
  holders.set(db, holder);
}

/**
 * Fences every later write through `db` by `fence` (until {@link unfenceWrites}).
 * A database opened other than by `openDatabase` has no holder: nothing to fence.
 */
export function fenceWrites(db: Kysely<any>, fence: WriteFence): void {
  holders.get(db)?.fences.set(fence.studyKey, fence);
}

/** Lifts the fence of one lease (it was released). */
export function unfenceWrites(db: Kysely<any>, studyKey: string): void {
  holders.get(db)?.fences.delete(studyKey);
}

const WRITE_NODES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);
const RAW_WRITE = /^\s*(insert|update|delete|replace|merge)\b|^\s*with\b[\s\S]*\b(insert|update|delete)\b/i;

/** True for a query that writes rows. */
function isWrite(query: CompiledQuery): boolean {
  const kind = query.query.kind;
  if (WRITE_NODES.has(kind)) return true;
  return kind === 'RawNode' && RAW_WRITE.test(query.sql);
}

/** A connection of the fenced driver: it knows whether it is inside a transaction. */
class FencedConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly driver: FencedDriver,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction) {
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (error) {
        throw await this.driver.refusalOf(error);
      }
    }
    if (this.driver.holder.fences.size === 0 || !isWrite(query)) return this.inner.executeQuery<R>(query);
    // A write on its own: inside a transaction that checks the fence first.
    await this.driver.beginTransaction(this, {});
    try {
      const result = await this.inner.executeQuery<R>(query);
      await this.driver.commitTransaction(this);
      return result;
    } catch (error) {
      if (this.inTransaction) await this.driver.rollbackTransaction(this).catch(() => undefined);
      throw error;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/** A driver whose write transactions check the fences of {@link FenceHolder} first. */
export class FencedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    readonly holder: FenceHolder,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new FencedConnection(await this.inner.acquireConnection(), this);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const fenced = connection as FencedConnection;
    try {
      await this.inner.beginTransaction(fenced.inner, settings);
    } catch (error) {
      throw await this.refusalOf(error);
    }
    fenced.inTransaction = true;
    if (settings.accessMode === 'read only') return;
    for (const fence of this.holder.fences.values()) {
      let held: boolean;
      try {
        held = await this.checkFence(fenced.inner, fence);
      } catch (error) {
        await this.rollbackTransaction(connection).catch(() => undefined);
        throw await this.refusalOf(error);
      }
      if (!held) {
        await this.rollbackTransaction(connection).catch(() => undefined);
        throw new LeaseLostError(fence);
      }
    }
  }

  /** True when the lease row still names this owner and generation. */
  private async checkFence(connection: DatabaseConnection, fence: WriteFence): Promise<boolean> {
    const p = this.holder.placeholder;
    const result = await connection.executeQuery(
      CompiledQuery.raw(
        `select 1 as held from leases where study_key = ${p(1)} and owner_id = ${p(2)} and generation = ${p(3)}`,
        [fence.studyKey, fence.ownerId, fence.generation],
      ),
    );
    return result.rows.length > 0;
  }

  /**
   * What a failed statement of a fenced connection reports: a connection lost
   * while this process holds a lease (its session ended by the server after a
   * pause: src/storage/postgres.ts) is looked at again on a new connection,
   * and when the lease was taken over meanwhile the failure is that —
   * {@link LeaseLostError}, not a lost database. So is a lock wait that timed
   * out (PostgreSQL 55P03: a paused process resumed behind the new owner's
   * transaction). Any other error, or one
   * whose lease is still held (or cannot be read), as it is.
   */
  async refusalOf(error: unknown): Promise<unknown> {
    if (this.holder.fences.size === 0 || !(isConnectionLoss(error) || isLockTimeout(error))) return error;
    let connection: DatabaseConnection | undefined;
    try {
      connection = await this.inner.acquireConnection();
      for (const fence of this.holder.fences.values()) {
        if (!(await this.checkFence(connection, fence))) return new LeaseLostError(fence);
      }
    } catch {
      // The lease cannot be read either: the database is what failed.
    } finally {
      if (connection !== undefined) await this.inner.releaseConnection(connection).catch(() => undefined);
    }
    return error;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const fenced = connection as FencedConnection;
    try {
      await this.inner.commitTransaction(fenced.inner);
    } catch (error) {
      throw await this.refusalOf(error);
    } finally {
      fenced.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const fenced = connection as FencedConnection;
    try {
      await this.inner.rollbackTransaction(fenced.inner);
    } finally {
      fenced.inTransaction = false;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.inner.releaseConnection((connection as FencedConnection).inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** PostgreSQL's `lock_not_available` (55P03): a statement gave up waiting for a lock (lock_timeout). */
function isLockTimeout(error: unknown): boolean {
  return (error as { code?: string } | undefined)?.code === '55P03';
}
