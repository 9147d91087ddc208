/**
 * The viewer's reads of the stored results: the per-example store
 * (`example_results`: one row per evaluator fingerprint, artifact hash,
 * example id and repeat), the per-partition store of experiments recorded
 * before it (`evaluations`, `evaluation_examples`) and the change
 * fingerprint of `GET /api/events`. Read-only; rows come back as stored
 * (JSON columns as text), the viewer (src/view/) parses them.
 *
 * @module
 */
import { sql } from 'kysely';
import type { StudyDatabase } from '../study-database.ts';
import { backendOf, listTables } from '../study-database.ts';

/** One stored example-repeat without its record (`example_results`). */
export interface ExampleOutcomeRow {
  exampleId: string;
  repeat: number;
  /** 1 valid, 0 invalid. */
  valid: number;
  composite: number | null;
  /** JSON text: `{ inputTokens, outputTokens, costUsd }` as the executor reported them. */
  usage: string;
  createdAt: string;
}

/** One stored example-repeat with its ExampleScoreRecord (JSON text). */
export interface ExampleScoreRow {
  exampleId: string;
  repeat: number;
  /** 1 valid, 0 invalid. */
  valid: number;
  composite: number | null;
  /** JSON text of the ExampleScoreRecord. */
  score: string;
}

/** Executor usage summed over every stored result. */
export interface StoredUsageTotal {
  /** Rows of `example_results`: one execution each. */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** One evaluation of the per-partition store (`evaluations`), as stored. */
export interface EvaluationRow {
  id: number;
  fingerprint: string;
  artifact_hash: string;
  partition: string;
  partition_hash: string;
  repeat: number;
  composite: number | null;
  invalid: number;
  total: number;
  /** JSON text of the usage. */
  usage: string;
  created_at: string;
}

/** One example of an evaluation of the per-partition store (`evaluation_examples`). */
export interface EvaluationExampleRow {
  evaluation_id: number;
  example_id: string;
  /** 1 valid, 0 invalid. */
  valid: number;
  composite: number | null;
  /** JSON text of the ExampleScoreRecord. */
  score: string;
}

/** The reads of this module, without the database argument. */
export interface ViewResultsStore {
  readExampleOutcomes(fingerprint: string, artifactHash: string): Promise<ExampleOutcomeRow[]>;
  readExampleScores(
    fingerprint: string,
    artifactHash: string,
    exampleIds: readonly string[],
    repeats: number,
  ): Promise<ExampleScoreRow[]>;
  sumExampleResultUsage(): Promise<StoredUsageTotal>;
  readEvaluations(): Promise<EvaluationRow[]>;
  readEvaluationExamples(evaluationIds: readonly number[]): Promise<EvaluationExampleRow[]>;
  readNotebookVersion(): Promise<string>;
}

/** Every stored example-repeat of one artifact under one fingerprint, by example id then repeat. */
export async function readExampleOutcomes(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
): Promise<ExampleOutcomeRow[]> {
  return db
    .selectFrom('example_results')
    .select(['example_id as exampleId', 'repeat', 'valid', 'composite', 'usage', 'created_at as createdAt'])
    .where('fingerprint', '=', fingerprint)
    .where('artifact_hash', '=', artifactHash)
    .orderBy('example_id')
    .orderBy('repeat')
    .execute();
}

/** How many ids one statement binds: SQLite limits the bound parameters of a statement. */
const ID_SLICE = 500;

/**
 * The stored records of the given examples of one artifact, repeats
 * 0..`repeats`−1, by example id then repeat (read in slices of 500 ids; the
 * order holds within each slice, the slices in the order of `exampleIds`).
 */
export async function readExampleScores(
  db: StudyDatabase,
  fingerprint: string,
  artifactHash: string,
  exampleIds: readonly string[],
  repeats: number,
): Promise<ExampleScoreRow[]> {
  const rows: ExampleScoreRow[] = [];
  for (let start = 0; start < exampleIds.length; start += ID_SLICE) {
    rows.push(
      ...(await db
        .selectFrom('example_results')
        .select(['example_id as exampleId', 'repeat', 'valid', 'composite', 'score'])
        .where('fingerprint', '=', fingerprint)
        .where('artifact_hash', '=', artifactHash)
        .where('example_id', 'in', exampleIds.slice(start, start + ID_SLICE))
        .where('repeat', '<', repeats)
        .orderBy('example_id')
        .orderBy('repeat')
        .execute()),
    );
  }
  return rows;
}

interface UsageSums {
  calls: number;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

/**
 * Every stored result: calls = rows (a stored result is never executed
 * again), tokens and cost summed from the usage JSON; a field that is not a
 * number counts as 0 (JSON1 is built into the SQLite of better-sqlite3).
 */
export async function sumExampleResultUsage(db: StudyDatabase): Promise<StoredUsageTotal> {
  const result =
    backendOf(db) === 'postgres'
      ? await sql<UsageSums>`select
          count(*) as calls,
          sum(case when jsonb_typeof(usage::jsonb -> 'inputTokens') = 'number' then (usage::jsonb ->> 'inputTokens')::double precision end) as input_tokens,
          sum(case when jsonb_typeof(usage::jsonb -> 'outputTokens') = 'number' then (usage::jsonb ->> 'outputTokens')::double precision end) as output_tokens,
          sum(case when jsonb_typeof(usage::jsonb -> 'costUsd') = 'number' then (usage::jsonb ->> 'costUsd')::double precision end) as cost_usd
        from example_results`.execute(db)
      : await sql<UsageSums>`select
          count(*) as calls,
          sum(case when json_valid(usage) then (case when json_type(usage, '$.inputTokens') in ('integer', 'real') then json_extract(usage, '$.inputTokens') end) end) as input_tokens,
          sum(case when json_valid(usage) then (case when json_type(usage, '$.outputTokens') in ('integer', 'real') then json_extract(usage, '$.outputTokens') end) end) as output_tokens,
          sum(case when json_valid(usage) then (case when json_type(usage, '$.costUsd') in ('integer', 'real') then json_extract(usage, '$.costUsd') end) end) as cost_usd
        from example_results`.execute(db);
  const row = result.rows[0];
  return {
    calls: Number(row?.calls ?? 0),
    inputTokens: Number(row?.input_tokens ?? 0),
    outputTokens: Number(row?.output_tokens ?? 0),
    costUsd: Number(row?.cost_usd ?? 0),
  };
}

/** Every evaluation of the per-partition store (not its per-example rows), by id. Throws when the notebook has no such table. */
export async function readEvaluations(db: StudyDatabase): Promise<EvaluationRow[]> {
  return (await db
    .selectFrom('evaluations')
    .select([
      'id',
      'fingerprint',
      'artifact_hash',
      'partition',
      'partition_hash',
      'repeat',
      'composite',
      'invalid',
      'total',
      'usage',
      'created_at',
    ])
    .orderBy('id')
    .execute()) as EvaluationRow[];
}

/** The per-example rows of the given evaluations of the per-partition store, by evaluation id; none for no ids. */
export async function readEvaluationExamples(
  db: StudyDatabase,
  evaluationIds: readonly number[],
): Promise<EvaluationExampleRow[]> {
  if (evaluationIds.length === 0) return [];
  return db
    .selectFrom('evaluation_examples')
    .select(['evaluation_id', 'example_id', 'valid', 'composite', 'score'])
    .where('evaluation_id', 'in', [...evaluationIds])
    .orderBy('evaluation_id')
    .execute();
}

/**
 * What the change fingerprint reads, one cheap query each: the newest row
 * (or a count) of every table whose rows the pages show. `example_results`
 * has no id column: in SQLite its rowid grows with every stored result (the
 * incumbent's top-ups, a candidate's screening), so the budget redraws while
 * a round runs; PostgreSQL has no rowid, so there its rows are counted. A
 * table the notebook does not have (one written before it, opened read-only)
 * is left out.
 */
const CHANGE_PROBES: ReadonlyArray<{ key: string; table: string; probe: string; postgres?: string }> = [
  { key: 'e', table: 'experiments', probe: 'select max(id) from experiments' },
  { key: 'r', table: 'registry_events', probe: 'select max(id) from registry_events' },
  {
    key: 'x',
    table: 'example_results',
    probe: 'select max(rowid) from example_results',
    postgres: 'select count(*) from example_results',
  },
  { key: 'v', table: 'evaluations', probe: 'select max(id) from evaluations' },
  { key: 'p', table: 'proposals', probe: 'select max(id) from proposals' },
  { key: 'u', table: 'runs', probe: 'select max(id) from runs' },
  { key: 'f', table: 'runs', probe: 'select count(*) from runs where ended_at is not null' },
  { key: 'c', table: 'corpus_events', probe: 'select max(id) from corpus_events' },
  { key: 'd', table: 'review_items', probe: "select count(*) from review_items where status <> 'pending'" },
  { key: 'q', table: 'review_items', probe: 'select max(id) from review_items' },
  { key: 'k', table: 'calibrations', probe: 'select max(id) from calibrations' },
  { key: 'l', table: 'leases', probe: 'select count(*) from leases' },
  // Online studies: a new experiment, a decision, a look (exposures and outcomes arrive too often to redraw on each).
  { key: 'o', table: 'online_looks', probe: 'select max(id) from online_looks' },
  { key: 'n', table: 'online_experiments', probe: 'select max(id) from online_experiments' },
];

/**
 * A cheap fingerprint of everything the viewer's pages show (JSON text of
 * one value per probe; `{}` for a notebook with none of those tables): it
 * changes whenever the notebook does.
 */
export async function readNotebookVersion(db: StudyDatabase): Promise<string> {
  const tables = await listTables(db);
  const probes = CHANGE_PROBES.filter((probe) => tables.has(probe.table));
  if (probes.length === 0) return '{}';
  const postgres = backendOf(db) === 'postgres';
  const result = await sql<
    Record<string, number | string | null>
  >`select ${sql.raw(probes.map((probe) => `(${postgres ? (probe.postgres ?? probe.probe) : probe.probe}) as ${probe.key}`).join(', '))}`.execute(
    db,
  );
  return JSON.stringify(result.rows[0] ?? {});
}
