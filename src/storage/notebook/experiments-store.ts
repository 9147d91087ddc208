/**
 * The notebook's experiments (the `experiments` table: one row per candidate,
 * append-only) and the versions they accepted. Rows are storage-level
 * shapes: the evidence is the stored JSON text, parsed and typed by the loop
 * (src/gate/evidence-schema.ts), never here.
 *
 * @module
 */
import type { StudyDatabase } from '../study-database.ts';
import type { ArtifactVersion } from '../registry.ts';
import { putVersion, setRegistryVersion } from '../registry.ts';
import { incrementShadowExposures } from './corpus-store.ts';

/** An experiment as the loop reads the rounds before one: its decision and stored evidence. */
export interface PriorExperimentRow {
  id: number;
  baseVersionId: number;
  candidateHash: string;
  delta: string;
  /** `accepted`, `refused` or `skipped`. */
  decision: string;
  /** The refusal reason, or `accepted`. */
  reason: string;
  /** The stored evidence, JSON text. */
  evidence: string;
}

/** An experiment recorded in a round, by what a resumed round finds it. */
export interface RoundExperimentRow {
  /** The identity of the candidate it decided; null in rows older than migration 0008. */
  candidateId: string | null;
  delta: string;
  decision: string;
  candidateHash: string;
}

/** A stored version's hash, and the round of the experiment that accepted it (null: no experiment did). */
export interface VersionRoundRow {
  hash: string;
  round: number | null;
}

/** One experiment to insert (every column but the id, which the database assigns). */
export interface NewExperimentRow {
  runId: number;
  round: number;
  proposer: string;
  baseVersionId: number;
  candidateHash: string;
  delta: string;
  rationale: string;
  /** `accepted`, `refused` or `skipped`. */
  decision: string;
  reason: string;
  /** JSON text. */
  evidence: string;
  fingerprint: string;
  seed: number;
  /** ISO 8601 UTC. */
  createdAt: string;
  change: string | null;
  candidateId: string | null;
}

/** What else the transaction that inserts an experiment writes. */
export interface ExperimentEffects {
  /** Shadow examples that gain one exposure (the gate consulted shadow); empty or absent: none. */
  shadowIds?: readonly string[];
  /** The accepted artifact's text: stored as a new version (source `accepted`) and made active. */
  acceptedText?: string;
  now: () => Date;
}

/** An experiment's evidence, by id. */
export interface ExperimentEvidenceRow {
  id: number;
  evidence: string;
}

/** The experiments store: what it exports, without the `db` argument (the notebook interface aggregates it). */
export interface ExperimentsStore {
  countEvaluatedExperiments(): Promise<number>;
  maxExperimentRound(): Promise<number>;
  lastExperimentId(): Promise<number | null>;
  readExperimentsBefore(round: number): Promise<PriorExperimentRow[]>;
  readVersionRounds(): Promise<VersionRoundRow[]>;
  readRoundExperiments(round: number): Promise<RoundExperimentRow[]>;
  readExperimentEvidence(): Promise<ExperimentEvidenceRow[]>;
  insertExperiment(
    row: NewExperimentRow,
    effects: ExperimentEffects,
  ): Promise<{ id: number; accepted?: ArtifactVersion }>;
  roundAcceptingVersion(versionId: number): Promise<number>;
  readExperimentIdentity(id: number): Promise<ExperimentIdentityRow | undefined>;
  readEvaluatedThrough(
    round: number,
    exceptId: number,
  ): Promise<Array<Pick<ExperimentIdentityRow, 'id' | 'delta' | 'candidateHash'>>>;
}

/** Experiments evaluated and decided (rows with decision `skipped` do not count). */
export async function countEvaluatedExperiments(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('experiments')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('decision', '!=', 'skipped')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The highest round that recorded an experiment (0 before the first). */
export async function maxExperimentRound(db: StudyDatabase): Promise<number> {
  const row = await db
    .selectFrom('experiments')
    .select((eb) => eb.fn.max<number>('round').as('round'))
    .executeTakeFirst();
  return Number(row?.round ?? 0);
}

/** The id of the last experiment recorded, or null when there is none. */
export async function lastExperimentId(db: StudyDatabase): Promise<number | null> {
  const row = await db
    .selectFrom('experiments')
    .select((eb) => eb.fn.max<number>('id').as('id'))
    .executeTakeFirst();
  return row?.id === null || row?.id === undefined ? null : Number(row.id);
}

/** The experiments of the rounds before `round`, by id. */
export async function readExperimentsBefore(db: StudyDatabase, round: number): Promise<PriorExperimentRow[]> {
  const rows = await db
    .selectFrom('experiments')
    .select(['id', 'base_version_id', 'candidate_hash', 'delta', 'decision', 'reason', 'evidence'])
    .where('round', '<', round)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    baseVersionId: row.base_version_id,
    candidateHash: row.candidate_hash,
    delta: row.delta,
    decision: row.decision,
    reason: row.reason,
    evidence: row.evidence,
  }));
}

/** Every stored version's hash with the round that accepted it (null for the seed, approved or imported ones). */
export async function readVersionRounds(db: StudyDatabase): Promise<VersionRoundRow[]> {
  return db
    .selectFrom('artifact_versions')
    .leftJoin('experiments', 'experiments.id', 'artifact_versions.experiment_id')
    .select(['artifact_versions.hash as hash', 'experiments.round as round'])
    .execute();
}

/** The experiments recorded in `round`, by id. */
export async function readRoundExperiments(db: StudyDatabase, round: number): Promise<RoundExperimentRow[]> {
  const rows = await db
    .selectFrom('experiments')
    .select(['candidate_id', 'delta', 'decision', 'candidate_hash'])
    .where('round', '=', round)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    candidateId: row.candidate_id,
    delta: row.delta,
    decision: row.decision,
    candidateHash: row.candidate_hash,
  }));
}

/** Every experiment's stored evidence, by id. */
export async function readExperimentEvidence(db: StudyDatabase): Promise<ExperimentEvidenceRow[]> {
  return db.selectFrom('experiments').select(['id', 'evidence']).orderBy('id').execute();
}

/**
 * Inserts one experiment and its effects in one transaction: the shadow
 * exposures it spent and, for an accepted one, the new version, its link
 * from the experiment and the registry's move to it (`experiment <id>
 * accepted`). Returns the experiment's id and the accepted version.
 */
export async function insertExperiment(
  db: StudyDatabase,
  row: NewExperimentRow,
  effects: ExperimentEffects,
): Promise<{ id: number; accepted?: ArtifactVersion }> {
  return db.transaction().execute(async (transaction) => {
    const inserted = await transaction
      .insertInto('experiments')
      .values({
        run_id: row.runId,
        round: row.round,
        proposer: row.proposer,
        base_version_id: row.baseVersionId,
        candidate_hash: row.candidateHash,
        delta: row.delta,
        rationale: row.rationale,
        decision: row.decision,
        reason: row.reason,
        evidence: row.evidence,
        accepted_version_id: null,
        fingerprint: row.fingerprint,
        seed: row.seed,
        created_at: row.createdAt,
        change: row.change,
        candidate_id: row.candidateId,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await incrementShadowExposures(transaction, effects.shadowIds ?? [], effects.now);
    if (effects.acceptedText === undefined) return { id: inserted.id };
    const accepted = await putVersion(
      transaction,
      effects.acceptedText,
      'accepted',
      row.baseVersionId,
      inserted.id,
      effects.now,
    );
    await transaction
      .updateTable('experiments')
      .set({ accepted_version_id: accepted.id })
      .where('id', '=', inserted.id)
      .execute();
    await setRegistryVersion(transaction, accepted.id, `experiment ${inserted.id} accepted`, 'active', effects.now);
    return { id: inserted.id, accepted };
  });
}

/** The round in which `versionId` was accepted (0 for a version no experiment accepted: the seed, an approved or imported one). */
export async function roundAcceptingVersion(db: StudyDatabase, versionId: number): Promise<number> {
  const row = await db
    .selectFrom('experiments')
    .select('round')
    .where('accepted_version_id', '=', versionId)
    .executeTakeFirst();
  return row?.round ?? 0;
}

/** An experiment as the duplicate finder reads it. */
export interface ExperimentIdentityRow {
  id: number;
  round: number;
  decision: string;
  reason: string;
  delta: string;
  candidateHash: string;
}

/** Experiment `id`'s round, decision, delta and content hash; undefined when there is none. */
export async function readExperimentIdentity(
  db: StudyDatabase,
  id: number,
): Promise<ExperimentIdentityRow | undefined> {
  const row = await db
    .selectFrom('experiments')
    .select(['id', 'round', 'decision', 'reason', 'delta', 'candidate_hash'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { ...identityOf(row), round: row.round, decision: row.decision, reason: row.reason };
}

/**
 * The experiments evaluated (not skipped, not an infrastructure failure) in
 * rounds up to `round`, but experiment `exceptId`, by id: their id, delta
 * and content hash (round, decision and reason as filtered).
 */
export async function readEvaluatedThrough(
  db: StudyDatabase,
  round: number,
  exceptId: number,
): Promise<Array<Pick<ExperimentIdentityRow, 'id' | 'delta' | 'candidateHash'>>> {
  const rows = await db
    .selectFrom('experiments')
    .select(['id', 'delta', 'candidate_hash'])
    .where('round', '<=', round)
    .where('decision', '!=', 'skipped')
    .where('reason', '!=', 'evaluation_failed')
    .where('id', '!=', exceptId)
    .orderBy('id')
    .execute();
  return rows.map(identityOf);
}

function identityOf(row: { id: number; delta: string; candidate_hash: string }): {
  id: number;
  delta: string;
  candidateHash: string;
} {
  return { id: Number(row.id), delta: row.delta, candidateHash: row.candidate_hash };
}
