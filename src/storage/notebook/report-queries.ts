/**
 * The study report's reads and its one write (src/report/): the corpus moves
 * since a run began, the decisions, the failed proposer answers, the
 * per-example results a refused edit fixed or broke, and the report stored
 * with its run. Rows come back as stored (JSON columns as text).
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';

/** One corpus move as the report lists it (`corpus_events`). */
export interface CorpusMoveRow {
  /** Null for a move whose example id could not be read. */
  exampleId: string | null;
  kind: string;
  /** The last experiment decided when the move happened; null: none yet. */
  experimentId: number | null;
  createdAt: string;
}

/** One decision as the report counts it (`experiments`; `evidence` is JSON text). */
export interface DecisionRow {
  id: number;
  /** 'accepted' | 'refused' | 'skipped' */
  decision: string;
  reason: string;
  runId: number;
  evidence: string;
}

/** The two sides of one experiment: its evaluator fingerprint, the candidate's content hash and its base version's. */
export interface ExperimentSidesRow {
  id: number;
  fingerprint: string;
  candidateHash: string;
  baseHash: string;
}

/** One stored example-repeat's composite (`example_results`). */
export interface ExampleCompositeRow {
  exampleId: string;
  composite: number | null;
  /** 1 valid, 0 invalid. */
  valid: number;
}

/** The reads and the write of this module, without the database argument. */
export interface ReportStore {
  readLastCorpusEventId(): Promise<number>;
  readCorpusMovesSince(afterEventId: number, kinds: readonly string[]): Promise<CorpusMoveRow[]>;
  readDecisions(): Promise<DecisionRow[]>;
  readFailedProposalFailures(runId?: number): Promise<string[]>;
  readExperimentSides(experimentIds: readonly number[]): Promise<ExperimentSidesRow[]>;
  readExampleComposites(fingerprint: string, artifactHash: string): Promise<ExampleCompositeRow[]>;
  writeRunReport(runId: number, reportJson: string): Promise<void>;
}

/** The id of the newest corpus event; 0 when there is none. */
export async function readLastCorpusEventId(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('corpus_events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** The corpus events of the given kinds recorded after event `afterEventId`, oldest first. */
export async function readCorpusMovesSince(
  db: StudyDatabase,
  afterEventId: number,
  kinds: readonly string[],
): Promise<CorpusMoveRow[]> {
  return db
    .selectFrom('corpus_events')
    .select(['example_id as exampleId', 'kind', 'experiment_id as experimentId', 'created_at as createdAt'])
    .where('id', '>', afterEventId)
    .where('kind', 'in', [...kinds])
    .orderBy('id')
    .execute();
}

/** Every experiment's decision, in the order the database returns them (no order is asked). */
export async function readDecisions(db: StudyDatabase): Promise<DecisionRow[]> {
  return db.selectFrom('experiments').select(['id', 'decision', 'reason', 'run_id as runId', 'evidence']).execute();
}

/** The `failures` JSON text of every failed proposer call, of the whole study or of run `runId`. */
export async function readFailedProposalFailures(db: StudyDatabase, runId?: number): Promise<string[]> {
  let query = db.selectFrom('proposals').select('failures').where('outcome', '=', 'failed');
  if (runId !== undefined) query = query.where('run_id', '=', runId);
  return (await query.execute()).map((row) => row.failures);
}

/** The fingerprint, candidate hash and base version hash of the given experiments; none for no ids. */
export async function readExperimentSides(
  db: StudyDatabase,
  experimentIds: readonly number[],
): Promise<ExperimentSidesRow[]> {
  if (experimentIds.length === 0) return [];
  const rows = await db
    .selectFrom('experiments')
    .innerJoin('artifact_versions', 'artifact_versions.id', 'experiments.base_version_id')
    .select([
      'experiments.id as id',
      'experiments.fingerprint as fingerprint',
      'experiments.candidate_hash as candidateHash',
      'artifact_versions.hash as baseHash',
    ])
    .where('experiments.id', 'in', [...experimentIds])
    .execute();
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** Every stored example-repeat's composite and validity of one artifact under one fingerprint. */
export async function readExampleComposites(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
): Promise<ExampleCompositeRow[]> {
  return db
    .selectFrom('example_results')
    .select(['example_id as exampleId', 'composite', 'valid'])
    .where('fingerprint', '=', fingerprint)
    .where('artifact_hash', '=', artifactHash)
    .execute();
}

/** Stores a run's final report (JSON text) with the run. */
export async function writeRunReport(db: StudyDatabase, runId: number, reportJson: string): Promise<void> {
  await db.updateTable('runs').set({ report: reportJson }).where('id', '=', runId).execute();
}
