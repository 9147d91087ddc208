/**
 * The lease's timing (src/storage/lease.ts), in a module of its own so the
 * PostgreSQL pool (src/storage/postgres.ts) can bound how long a paused
 * process keeps a transaction open by the same staleness, without importing
 * the lease (which imports the database, which imports the pool).
 */

/** How often a holder renews its heartbeat, in milliseconds. */
export const LEASE_HEARTBEAT_INTERVAL_MS = 2_000;
/** A lease whose heartbeat is older than this (milliseconds) is stale and may be taken over. */
export const LEASE_STALE_AFTER_MS = 15_000;
