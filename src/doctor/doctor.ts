/**
 * `kloop doctor`: is the study's database sound, and is the study set up the
 * way the seed's Quick Checklist asks (seeds/002 "Quick Checklist": a metric
 * measured automatically, 15–25 or more seed examples, a program with three
 * registers, invariants listed, the metric scraper built and tested, fast and
 * slow loop schedules set, results logged to git or a structured database,
 * stopping criteria defined)? Every check works through the task contract,
 * for any task; plus the power check `kloop run` makes before round 1.
 *
 * Every finding says what to fix. Read-only: the database is opened read-only
 * and nothing is written (the incumbent is evaluated into a scratch database
 * in memory).
 */
import { constants, existsSync } from 'node:fs';
import path from 'node:path';
import type { StudyDatabase } from '../storage/study-database.ts';
import { databaseExists } from '../storage/database.ts';
import { isPostgresUrl } from '../storage/location.ts';
import { loadStudyConfig } from '../config/config.ts';
import type { ComposedTask } from '../study/compose.ts';
import { composeTaskAsync } from '../study/compose.ts';
import { maskSecrets } from '../text/mask-secrets.ts';

import type { DoctorFinding, DoctorReport } from './doctor-finding.ts';
import type { DatabaseCheckOptions } from './database-check.ts';
import { checkDatabase } from './database-check.ts';
import { canAccess, checkSetup, proposerFindings } from './setup-check.ts';
import { checkMeasurement } from './measurement-check.ts';

export type { DoctorFinding, DoctorReport } from './doctor-finding.ts';
export { type DatabaseCheckOptions, checkDatabase } from './database-check.ts';
export { MIN_SEED_EXAMPLES, checkSetup } from './setup-check.ts';
export { type MeasurementCheckOptions, checkMeasurement } from './measurement-check.ts';

/** Every finding of a study: set-up, then database. */
export async function diagnoseStudy(
  studyDir: string,
  databaseFile: string,
  openReadOnly: (file: string) => Promise<StudyDatabase>,
  options: DatabaseCheckOptions = {},
): Promise<DoctorReport> {
  // A PostgreSQL notebook (src/storage/location.ts): no file to find or to check the permissions of.
  const postgres = isPostgresUrl(databaseFile);
  const hasDatabase = postgres ? await databaseExists(databaseFile) : existsSync(databaseFile);
  // A custom task's scorer module loads asynchronously: composed here, checked with the rest of the set-up.
  // A custom task's scorer module that does not load is reported with its own message (the file named).
  const composed: ComposedTask | { error: string } = await (async () =>
    composeTaskAsync(loadStudyConfig(studyDir)))().catch((error: unknown) => ({
    error: error instanceof Error ? error.message : String(error),
  }));
  const findings = checkSetup(studyDir, { hasDatabase, composed });
  // The power check only on a study that loads: the set-up findings name whatever keeps it from loading.
  if (
    !('error' in composed) &&
    findings.every((finding) => finding.status !== 'problem' || finding.id === 'setup.seed-examples')
  ) {
    findings.push(...(await checkMeasurement(studyDir, { databaseFile, hasDatabase, openReadOnly })));
  }
  // After the measurement: a proposer that cannot read the artifact keeps no instrument from being tested.
  findings.push(...proposerFindings(studyDir));
  if (hasDatabase) {
    const readable = postgres || canAccess(databaseFile, constants.R_OK);
    const writable =
      postgres || (canAccess(databaseFile, constants.W_OK) && canAccess(path.dirname(databaseFile), constants.W_OK));
    if (!readable) {
      findings.push({
        area: 'database',
        id: 'database.access',
        status: 'problem',
        message: `the study database ${databaseFile} is not readable by this user (permissions), so it was not checked; nothing says it is damaged`,
        fix: "run as the study's owner, or give this user read permission on the file and its folder",
      });
      return report(studyDir, databaseFile, findings);
    }
    if (!writable) {
      findings.push({
        area: 'database',
        id: 'database.access',
        status: 'info',
        message: `the study is read-only for this user (${databaseFile} or its folder cannot be written): the read-only commands (status, history, show, eval, export --out, doctor) work; kloop run, calibrate and corpus add need write access`,
        fix: 'to run the loop here, make .kloop/ and kloop.db writable, or copy the study to a writable folder',
      });
    }
    let db: StudyDatabase | undefined;
    try {
      db = await openReadOnly(databaseFile);
      findings.push(...(await checkDatabase(db, options)));
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause ?? (error as { code?: string });
      const damaged = typeof cause.code === 'string' && /^SQLITE_(NOTADB|CORRUPT)/.test(cause.code);
      findings.push({
        area: 'database',
        id: 'database.open',
        status: 'problem',
        message: `${damaged ? 'the study database is damaged' : 'cannot read the study database'}: ${(error as Error).message}`,
        fix: damaged
          ? 'restore the database from a backup, or `sqlite3 kloop.db ".recover"` into a new file and keep the old one'
          : 'check the file is a SQLite database kloop wrote and that this user may read it and its folder',
      });
    } finally {
      await db?.destroy();
    }
  }
  return report(studyDir, hasDatabase ? databaseFile : null, findings);
}

/** The report, with any password of the storage URL masked wherever it appears (the database, a finding's message or fix). */
function report(studyDir: string, databaseFile: string | null, findings: DoctorFinding[]): DoctorReport {
  const masked = findings.map((finding) => ({
    ...finding,
    message: maskSecrets(finding.message),
    ...(finding.fix !== undefined ? { fix: maskSecrets(finding.fix) } : {}),
  }));
  return {
    study: studyDir,
    database: databaseFile === null ? null : maskSecrets(databaseFile),
    healthy: findings.every((finding) => finding.status !== 'problem'),
    findings: masked,
  };
}
