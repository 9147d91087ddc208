/**
 * Production signals: one record per runtime call (or per ingested record),
 * what Loop D reads (DESIGN.md §5): assembly method, confidence, app class,
 * has-commitments, entity count, plus what stayed uncovered.
 *
 * Stored in the `signals` table (migration `0004_review_and_signals`):
 * `id` TEXT PK (uuid), `time` TEXT (ISO 8601), `assembly_method` TEXT,
 * `confidence` REAL, `app_class` TEXT, `has_commitments` INTEGER (0/1),
 * `entity_count` INTEGER, `artifact_version` TEXT (content hash),
 * `goal` TEXT NULL, `detail` TEXT (JSON: uncoveredEntities,
 * uncoveredBehaviors, patterns, timingMs), `source` TEXT
 * ('runtime' | 'ingest' | 'endpoint'), `received_at` TEXT.
 *
 * @example
 * ```ts
 * import { recordSignal } from './production-signal.ts';
 * await recordSignal(db, signal, { source: 'ingest' });
 * ```
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { isoNow } from '../storage/study-database.ts';
import { insertSignalRow, listSignalRows } from '../storage/notebook/signals-store.ts';
import type { SignalTable } from '../storage/schema.ts';

/** Where a signal came from. */
export const SIGNAL_SOURCES = ['runtime', 'ingest', 'endpoint'] as const;
export type SignalSource = (typeof SIGNAL_SOURCES)[number];

/** One production signal (the public record shape). */
export interface ProductionSignal {
  /** uuid */
  id: string;
  /** ISO 8601 time of the call. */
  time: string;
  /** 'direct' | 'decomposed' | 'partial' */
  assemblyMethod: string;
  /** Assembly confidence in [0, 1]. */
  confidence: number;
  /** The intent's appType. */
  appClass: string;
  /** Any entity with role `commitment`. */
  hasCommitments: boolean;
  entityCount: number;
  /** Content hash (SHA-256 hex) of the artifact version that ran. */
  artifactVersion: string;
  /** The goal text; absent when storing goals is turned off. */
  goal?: string;
  uncoveredEntities: string[];
  uncoveredBehaviors: string[];
  /** Ids of the patterns the assembly used, in choice order. */
  patterns: string[];
  /** Wall time of the call in milliseconds. */
  timingMs: number;
}

/** A stored signal: the record plus its source and when it was stored. */
export interface StoredSignal extends ProductionSignal {
  source: SignalSource;
  receivedAt: string;
}

/** The JSON of the `detail` column. */
export interface SignalDetail {
  uncoveredEntities: string[];
  uncoveredBehaviors: string[];
  patterns: string[];
  timingMs: number;
}

/** The row of a signal (the `received_at` time is given). */
export function signalToRow(signal: ProductionSignal, source: SignalSource, receivedAt: string): SignalTable {
  const detail: SignalDetail = {
    uncoveredEntities: signal.uncoveredEntities,
    uncoveredBehaviors: signal.uncoveredBehaviors,
    patterns: signal.patterns,
    timingMs: signal.timingMs,
  };
  return {
    id: signal.id,
    time: signal.time,
    assembly_method: signal.assemblyMethod,
    confidence: signal.confidence,
    app_class: signal.appClass,
    has_commitments: signal.hasCommitments ? 1 : 0,
    entity_count: signal.entityCount,
    artifact_version: signal.artifactVersion,
    goal: signal.goal ?? null,
    detail: JSON.stringify(detail),
    source,
    received_at: receivedAt,
  };
}

/** A row read back as a {@link StoredSignal}; a malformed `detail` reads as empty lists. */
export function signalFromRow(row: SignalTable): StoredSignal {
  let detail: Partial<SignalDetail> = {};
  try {
    detail = JSON.parse(row.detail) as Partial<SignalDetail>;
  } catch {
    detail = {};
  }
  return {
    id: row.id,
    time: row.time,
    assemblyMethod: row.assembly_method,
    confidence: row.confidence,
    appClass: row.app_class,
    hasCommitments: row.has_commitments === 1,
    entityCount: row.entity_count,
    artifactVersion: row.artifact_version,
    ...(row.goal !== null ? { goal: row.goal } : {}),
    uncoveredEntities: Array.isArray(detail.uncoveredEntities) ? detail.uncoveredEntities : [],
    uncoveredBehaviors: Array.isArray(detail.uncoveredBehaviors) ? detail.uncoveredBehaviors : [],
    patterns: Array.isArray(detail.patterns) ? detail.patterns : [],
    timingMs: typeof detail.timingMs === 'number' ? detail.timingMs : 0,
    source: row.source as SignalSource,
    receivedAt: row.received_at,
  };
}

/** Options of {@link recordSignal}. */
export interface RecordSignalOptions {
  /** Default 'runtime'. */
  source?: SignalSource;
  now?: () => Date;
}

/**
 * Stores one signal. Idempotent by id: a signal whose id is already stored is
 * left as it is (an ingest replayed twice counts once). Returns true when a
 * row was written.
 */
export async function recordSignal(
  db: StudyDatabase,
  signal: ProductionSignal,
  options: RecordSignalOptions = {},
): Promise<boolean> {
  const row = signalToRow(signal, options.source ?? 'runtime', isoNow(options.now));
  return await insertSignalRow(db, row);
}

/** Stored signals, oldest first, optionally from `since` (ISO 8601, inclusive). */
export async function listSignals(
  db: StudyDatabase,
  options: { since?: string; limit?: number } = {},
): Promise<StoredSignal[]> {
  return (await listSignalRows(db, options)).map(signalFromRow);
}
