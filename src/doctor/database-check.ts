/**
 * `kloop doctor`'s check of a study database (src/doctor/doctor.ts): SQLite's
 * integrity check, orphaned and dangling records, content hashes, decisions
 * made twice, candidates never decided, and leases held by dead processes.
 * Read-only (src/storage/notebook/doctor-queries.ts).
 */
import { hostname as osHostname } from 'node:os';
import { contentHash } from '../artifact/content-hash.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { backendOf, listTables } from '../storage/study-database.ts';
import type { DanglingCounts } from '../storage/notebook/doctor-queries.ts';
import {
  countDanglingRows,
  readAcceptedTwice,
  readDanglingPointers,
  readDecidedTwice,
  readIntegrityMessages,
  readUnfinishedRuns,
  readVersionContents,
} from '../storage/notebook/doctor-queries.ts';
import { LEASE_STALE_AFTER_MS, isProcessAlive, listLeases, staleReason } from '../storage/lease.ts';
import { hasCandidateIdentities, undecidedCandidateFindings } from './undecided-candidates.ts';

import type { DoctorFinding } from './doctor-finding.ts';

/** Options of {@link checkDatabase}. */
export interface DatabaseCheckOptions {
  now?: () => Date;
  hostname?: string;
  isProcessAlive?: (pid: number) => boolean;
  staleAfterMs?: number;
}

async function tableNames(db: StudyDatabase): Promise<Set<string>> {
  return listTables(db);
}

/** A finding of the database check, before its area is set. */
type Finding = Omit<DoctorFinding, 'area'>;

/** `database.integrity`: SQLite's integrity check (PostgreSQL's is the server's). */
async function integrityFinding(db: StudyDatabase): Promise<Finding> {
  // PostgreSQL keeps its own storage sound (no file to check); SQLite's check reads every page.
  const messages = await readIntegrityMessages(db);
  if (messages.length === 1 && messages[0] === 'ok')
    return {
      id: 'database.integrity',
      status: 'ok',
      message:
        backendOf(db) === 'postgres'
          ? "PostgreSQL notebook: its integrity is the server's (no file to check)"
          : 'SQLite integrity check: ok',
    };
  return {
    id: 'database.integrity',
    status: 'problem',
    message: `SQLite integrity check failed: ${messages.slice(0, 5).join('; ')}${messages.length > 5 ? ` (and ${messages.length - 5} more)` : ''}`,
    fix: 'restore the database from a backup, or `sqlite3 kloop.db ".recover"` into a new file and keep the old one',
  };
}

/** `database.schema`: a problem when tables are missing; null when every table is there. */
function schemaFinding(tables: ReadonlySet<string>): Finding | null {
  const required = ['artifact_versions', 'registry', 'experiments', 'evaluations', 'evaluation_examples', 'runs'];
  const missing = required.filter((name) => !tables.has(name));
  if (missing.length === 0) return null;
  return {
    id: 'database.schema',
    status: 'problem',
    message: `tables missing: ${missing.join(', ')}`,
    fix: 'this is not a kloop study database, or it was never migrated: run `kloop run` once',
  };
}

/** `database.orphaned-examples`, `database.empty-evaluations`, `database.experiment-versions`: rows that point nowhere. */
function danglingFindings(counts: DanglingCounts): Finding[] {
  const orphans = counts.orphanedExamples;
  const findings: Finding[] = [];
  findings.push(
    orphans === 0
      ? { id: 'database.orphaned-examples', status: 'ok', message: 'every per-example score belongs to an evaluation' }
      : {
          id: 'database.orphaned-examples',
          status: 'problem',
          message: `${orphans} per-example scores (evaluation_examples) belong to no evaluation`,
          fix: 'delete them: `delete from evaluation_examples where evaluation_id not in (select id from evaluations)`; they are never read',
        },
  );

  const incomplete = counts.emptyEvaluations;
  findings.push(
    incomplete === 0
      ? {
          id: 'database.empty-evaluations',
          status: 'ok',
          message: 'every stored evaluation has its per-example scores',
        }
      : {
          id: 'database.empty-evaluations',
          status: 'problem',
          message: `${incomplete} evaluations have no per-example scores`,
          fix: 'delete those evaluations; the next run evaluates them again',
        },
  );

  const danglingBase = counts.missingBase;
  const danglingAccepted = counts.missingAccepted;
  const acceptedWithoutVersion = counts.acceptedWithoutVersion;
  const dangling = danglingBase + danglingAccepted + acceptedWithoutVersion;
  findings.push(
    dangling === 0
      ? { id: 'database.experiment-versions', status: 'ok', message: 'every experiment points to stored versions' }
      : {
          id: 'database.experiment-versions',
          status: 'problem',
          message: `${danglingBase} experiments name a missing base version, ${danglingAccepted} a missing accepted version, ${acceptedWithoutVersion} accepted experiments have no version`,
          fix: 'the lab notebook lost versions: restore the database from a backup',
        },
  );

  return findings;
}

/** `database.registry`: every pointer names a stored version. */
async function registryFinding(db: StudyDatabase, hasActive: number): Promise<Finding> {
  const danglingRegistry = await readDanglingPointers(db);
  if (danglingRegistry.length > 0) {
    return {
      id: 'database.registry',
      status: 'problem',
      message: `registry pointers to missing versions: ${danglingRegistry.map((row) => `${row.name} → ${row.versionId}`).join(', ')}`,
      fix: "point them at a stored version (the last accepted one: `select max(id) from artifact_versions where source = 'accepted'`)",
    };
  }
  return {
    id: 'database.registry',
    status: hasActive > 0 ? 'ok' : 'info',
    message: hasActive > 0 ? 'the registry points to stored versions' : 'no active version yet (no run so far)',
  };
}

/** `database.version-hashes`: every version's text matches its content hash. */
async function versionHashFinding(db: StudyDatabase): Promise<Finding> {
  const versions = await readVersionContents(db);
  const corrupted = versions
    .filter((version) => contentHash(version.text) !== version.hash)
    .map((version) => version.id);
  return corrupted.length === 0
    ? {
        id: 'database.version-hashes',
        status: 'ok',
        message: `${versions.length} artifact versions match their content hashes`,
      }
    : {
        id: 'database.version-hashes',
        status: 'problem',
        message: `artifact versions ${corrupted.join(', ')} do not match their content hashes`,
        fix: 'restore the database from a backup; do not export those versions',
      };
}

/** `database.decided-once`: no candidate decided twice, no version accepted twice. */
async function decidedOnceFinding(db: StudyDatabase): Promise<Finding> {
  // One decision per candidate: by its identity (two candidates of a round may share a delta text); by delta for rows older than identities.
  const twice = await readDecidedTwice(db, await hasCandidateIdentities(db));
  const acceptedTwice = await readAcceptedTwice(db);
  return twice.length === 0 && acceptedTwice.length === 0
    ? {
        id: 'database.decided-once',
        status: 'ok',
        message: 'no experiment was decided twice and no version accepted twice',
      }
    : {
        id: 'database.decided-once',
        status: 'problem',
        message: [
          ...twice.map((row) => `round ${row.round} decided "${row.delta}" ${row.times} times`),
          ...acceptedTwice.map((row) => `version ${row.version} was accepted ${row.times} times`),
        ].join('; '),
        fix: 'two writers ran at once or a resumed round decided again: keep the first decision (lowest id) and report the bug',
      };
}

/** `database.lease` and `database.unfinished-runs`: who holds the study, and the runs that never recorded a stop. */
async function leaseFindings(db: StudyDatabase, options: DatabaseCheckOptions): Promise<Finding[]> {
  const unfinished = await readUnfinishedRuns(db);
  const findings: Finding[] = [];
  const now = (options.now ?? (() => new Date()))();
  const judge = {
    now,
    staleAfterMs: options.staleAfterMs ?? LEASE_STALE_AFTER_MS,
    hostname: options.hostname ?? osHostname(),
    isProcessAlive: options.isProcessAlive ?? isProcessAlive,
  };
  const leases = await listLeases(db);
  if (leases.length === 0) findings.push({ id: 'database.lease', status: 'ok', message: 'no run holds the study' });
  for (const lease of leases) {
    const stale = staleReason(lease, judge);
    findings.push(
      stale === null
        ? {
            id: 'database.lease',
            status: 'info',
            message: `a run is in progress: pid ${lease.pid} on host ${lease.hostname} since ${lease.acquiredAt} (heartbeat ${lease.heartbeatAt})`,
          }
        : {
            id: 'database.lease',
            status: 'problem',
            message: `the lease is held by a dead run: pid ${lease.pid} on host ${lease.hostname} since ${lease.acquiredAt}; ${stale}`,
            fix: "nothing to do by hand: the next `kloop run` takes a dead run's lease over and continues where it stopped",
          },
    );
  }
  if (unfinished.length > 0) {
    const running = leases.some((lease) => staleReason(lease, judge) === null);
    findings.push({
      id: 'database.unfinished-runs',
      status: 'info',
      message: `${unfinished.length} run(s) never recorded a stop (${unfinished.map((run) => `#${run.id} started ${run.startedAt}`).join(', ')})${running ? '; the latest may be the one in progress' : ': killed or crashed; the next run finishes their open round exactly'}`,
    });
  }
  return findings;
}

/**
 * Checks a study database: SQLite's integrity check, orphaned and dangling
 * records, content hashes, decisions made twice, and leases held by dead
 * processes.
 */
export async function checkDatabase(db: StudyDatabase, options: DatabaseCheckOptions = {}): Promise<DoctorFinding[]> {
  const found: Finding[] = [];
  const integrity = await integrityFinding(db);
  found.push(integrity);
  if (integrity.status !== 'ok') return inArea(found); // the other queries would read damaged pages
  const tables = await tableNames(db);
  const schema = schemaFinding(tables);
  if (schema !== null) return inArea([...found, schema]);
  const counts = await countDanglingRows(db);
  found.push(...danglingFindings(counts));
  found.push(await registryFinding(db, counts.activePointers));
  found.push(await versionHashFinding(db));
  found.push(await decidedOnceFinding(db));
  found.push(...(await undecidedCandidateFindings(db)));
  if (tables.has('leases')) found.push(...(await leaseFindings(db, options)));
  return inArea(found);
}

function inArea(findings: readonly Finding[]): DoctorFinding[] {
  return findings.map((finding) => ({ area: 'database', ...finding }));
}
