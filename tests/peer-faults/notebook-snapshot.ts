/**
 * A study notebook in a comparable form, on SQLite or PostgreSQL (read
 * through kloop's own storage layer): the decisions in order with their
 * evidence and candidate identities, the versions, the active version.
 * Timestamps, ids and run numbers are left out: two notebooks of one study
 * compare equal when they hold the same decisions, whoever wrote them.
 *
 * So is the evidence's `scores.usage`: the tokens of the calls the deciding
 * process made for the decision. After a crash, the results the killed
 * process had stored are read back, not paid again, so the resumed decision
 * counts fewer tokens than an uninterrupted run's (what was paid before the
 * crash is in `example_results.usage`). Every score, check and statistic is
 * compared.
 */
import { createHash } from 'node:crypto';
import { openDatabase } from '../../src/storage/database.ts';
import { databaseFile } from '../reliability-fixture.ts';

export interface NotebookSnapshot {
  experiments: Array<{
    round: number;
    candidateId: string | null;
    delta: string;
    decision: string;
    reason: string;
    evidence: string;
    base: string;
    accepted: string | null;
  }>;
  versions: Array<{ hash: string; source: string }>;
  active: string | undefined;
  /** Candidates decided more than once (by identity). */
  decidedTwice: number;
  leases: number;
}

/** Where a study's notebook is: its SQLite file, or the PostgreSQL URL it was run with. */
export function notebookLocation(studyDir: string, url?: string): string {
  return url ?? databaseFile(studyDir);
}

const short = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** The evidence without `scores.usage` (see the module comment). */
function withoutUsage(evidence: string): string {
  const parsed = JSON.parse(evidence) as { scores?: { usage?: unknown } };
  if (parsed.scores !== undefined) delete parsed.scores.usage;
  return JSON.stringify(parsed);
}

/** Reads the notebook at `location` (a SQLite file read-only, or a PostgreSQL URL). */
export async function snapshotNotebook(location: string): Promise<NotebookSnapshot> {
  const db = await openDatabase(location, { readonly: true });
  try {
    const versions = await db.selectFrom('artifact_versions').select(['id', 'hash', 'source']).orderBy('id').execute();
    const hashOf = new Map(versions.map((version) => [version.id, version.hash]));
    const rows = await db
      .selectFrom('experiments')
      .select([
        'round',
        'candidate_id',
        'delta',
        'decision',
        'reason',
        'evidence',
        'base_version_id',
        'accepted_version_id',
      ])
      .orderBy('id')
      .execute();
    const active = await db
      .selectFrom('registry')
      .innerJoin('artifact_versions', 'artifact_versions.id', 'registry.version_id')
      .select('artifact_versions.hash as hash')
      .where('registry.name', '=', 'active')
      .executeTakeFirst();
    const ids = rows.map((row) => row.candidate_id ?? `delta:${row.delta}`);
    return {
      experiments: rows.map((row) => ({
        round: Number(row.round),
        candidateId: row.candidate_id,
        delta: row.delta,
        decision: row.decision,
        reason: row.reason,
        evidence: withoutUsage(row.evidence),
        base: short(hashOf.get(row.base_version_id) ?? ''),
        accepted: row.accepted_version_id === null ? null : short(hashOf.get(row.accepted_version_id) ?? ''),
      })),
      versions: versions.map((version) => ({ hash: short(version.hash), source: version.source })),
      active: active === undefined ? undefined : short(active.hash),
      decidedTwice: ids.length - new Set(ids).size,
      leases: (await db.selectFrom('leases').select('study_key').where('study_key', 'not like', '%#worker:%').execute())
        .length,
    };
  } finally {
    await db.destroy();
  }
}
