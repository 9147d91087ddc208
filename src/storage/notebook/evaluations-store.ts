/**
 * The notebook's stored results per example and repeat (the
 * `example_results` table): what the evaluator reads back instead of
 * executing again, and writes after each execution. Rows are storage-level
 * shapes: the score record and the usage are JSON text, parsed by
 * src/evaluator/evaluator.ts.
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';

/** Which stored results of one artifact to read. */
export interface ExampleResultQuery {
  /** The evaluator fingerprint (or the scratch key) the results are stored under. */
  fingerprint: string;
  artifactHash: string;
  /** Repeats `firstRepeat..lastRepeat`, both included. */
  firstRepeat: number;
  lastRepeat: number;
  /** Only results stored at or after this ISO 8601 UTC time; absent: every one. */
  since?: string;
}

/** A stored result. */
export interface ExampleResultRow {
  exampleId: string;
  repeat: number;
  /** JSON text of the example's score record. */
  score: string;
  /** JSON text: `{ inputTokens, outputTokens, costUsd }`. */
  usage: string;
  latencyMs: number;
}

/** A result to store. */
export interface NewExampleResultRow extends ExampleResultRow {
  fingerprint: string;
  artifactHash: string;
  /** Whether the output was valid. */
  valid: boolean;
  /** The composite; null for an invalid output. */
  composite: number | null;
  /** ISO 8601 UTC. */
  createdAt: string;
}

/** The evaluations store: what it exports, without the `db` argument (the notebook interface aggregates it). */
export interface EvaluationsStore {
  readExampleResults(query: ExampleResultQuery): Promise<ExampleResultRow[]>;
  writeExampleResult(row: NewExampleResultRow, replaceBefore: string | undefined): Promise<void>;
  hasResultsUnderPrefix(prefix: string): Promise<boolean>;
  deleteResultsUnderPrefix(prefix: string): Promise<void>;
  deleteArtifactResults(fingerprint: string, artifactHash: string): Promise<void>;
}

/** The stored results of one artifact for a range of repeats. */
export async function readExampleResults(db: StudyDatabase, query: ExampleResultQuery): Promise<ExampleResultRow[]> {
  let select = db
    .selectFrom('example_results')
    .select(['example_id', 'repeat', 'score', 'usage', 'latency_ms'])
    .where('fingerprint', '=', query.fingerprint)
    .where('artifact_hash', '=', query.artifactHash)
    .where('repeat', '>=', query.firstRepeat)
    .where('repeat', '<=', query.lastRepeat);
  if (query.since !== undefined) select = select.where('created_at', '>=', query.since);
  const rows = await select.execute();
  return rows.map((row) => ({
    exampleId: row.example_id,
    repeat: row.repeat,
    score: row.score,
    usage: row.usage,
    latencyMs: row.latency_ms,
  }));
}

/**
 * Stores one result. When one is stored for the same (fingerprint,
 * artifact, example, repeat): with `replaceBefore` undefined it stays
 * (another writer stored the same result first); else it is replaced when it
 * was stored before `replaceBefore` (a re-measurement), and stays when
 * stored since (another writer of the same re-measurement).
 */
export async function writeExampleResult(
  db: StudyDatabase,
  row: NewExampleResultRow,
  replaceBefore: string | undefined,
): Promise<void> {
  const values = {
    valid: row.valid ? 1 : 0,
    composite: row.composite,
    score: row.score,
    usage: row.usage,
    latency_ms: row.latencyMs,
    created_at: row.createdAt,
  };
  await db
    .insertInto('example_results')
    .values({
      fingerprint: row.fingerprint,
      artifact_hash: row.artifactHash,
      example_id: row.exampleId,
      repeat: row.repeat,
      ...values,
    })
    .onConflict((conflict) =>
      replaceBefore === undefined
        ? conflict.doNothing()
        : conflict
            .columns(['fingerprint', 'artifact_hash', 'example_id', 'repeat'])
            .doUpdateSet(values)
            .where('example_results.created_at', '<', replaceBefore),
    )
    .execute();
}

/** Whether any result is stored under a fingerprint starting with `prefix` (a read: no write lock). */
export async function hasResultsUnderPrefix(db: StudyDatabase, prefix: string): Promise<boolean> {
  const found = await db
    .selectFrom('example_results')
    .select('fingerprint')
    .where('fingerprint', 'like', `${prefix}%`)
    .limit(1)
    .execute();
  return found.length > 0;
}

/** Deletes every result stored under a fingerprint starting with `prefix`. */
export async function deleteResultsUnderPrefix(db: StudyDatabase, prefix: string): Promise<void> {
  await db.deleteFrom('example_results').where('fingerprint', 'like', `${prefix}%`).execute();
}

/** Deletes the results of one artifact stored under `fingerprint`. */
export async function deleteArtifactResults(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
): Promise<void> {
  await db
    .deleteFrom('example_results')
    .where('fingerprint', '=', fingerprint)
    .where('artifact_hash', '=', artifactHash)
    .execute();
}
