/**
 * The corpus commands that write the study's notebook: `kloop corpus add`
 * (admission) and `kloop corpus promote` (a human moves examples). Each holds
 * the study's lease while it writes (a run in progress: exit 3, or `--wait`),
 * in a session of the session runner (src/cli/session/session-runner.ts).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readCandidateRecords } from '../../corpus/admission.ts';
import { PARTITIONS } from '../../corpus/example.ts';
import { InputError } from '../../errors.ts';
import { studyDatabaseLocation } from '../../storage/database.ts';
import { admitToStudy, promoteExamples } from '../../loop/corpus-lifecycle.ts';
import { print, printJson } from '../output.ts';
import type { SessionLease } from '../session/session-runner.ts';
import { runSession } from '../session/session-runner.ts';
import type { StudySession } from './study-session.ts';
import { openStudy } from './study-session.ts';
import { composeTask, withPartialGold } from '../../study/compose.ts';
import { loadStudyConfig } from '../../config/config.ts';
import type { LoadedStudy } from '../../loop/loaded-study.ts';
import { EXIT } from '../session/exit-codes.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

/** `kloop corpus add <study> <file>`: the admission of a file's records; sets `process.exitCode` (0 all admitted, 4 some refused). */
export async function corpusAddCommand(
  studyDir: string,
  file: string,
  options: { partialGold?: boolean; dryRun?: boolean; wait?: boolean; json?: boolean },
): Promise<void> {
  // Read with the study's record format (its task's schemas) before the database is opened.
  if (!existsSync(studyDir)) throw new InputError('the study folder does not exist', { file: studyDir });
  const format = composeTask(loadStudyConfig(studyDir)).exampleFormat;
  const candidates = readCandidateRecords(
    path.resolve(file),
    options.partialGold === true ? withPartialGold(format) : format,
  );
  if (!candidates.ok) {
    const first = candidates.errors[0]!;
    throw new InputError(
      `${first.message}${candidates.errors.length > 1 ? ` (and ${candidates.errors.length - 1} more errors)` : ''}`,
      {
        file: first.file,
        ...(first.line !== undefined ? { line: first.line } : {}),
        ...(first.field !== undefined ? { field: first.field } : {}),
      },
    );
  }
  const session = await openStudy(studyDir, { modelCalls: 'none', quiet: true });
  await runSession(
    {
      json: options.json === true,
      // A dry run writes nothing: it takes no lease.
      ...(options.dryRun === true ? {} : { lease: studyLease(session, options.wait) }),
      close: () => session.close(),
    },
    async () => {
      const source = relativeToStudy(session.study, path.resolve(file));
      const outcome = await admitToStudy(openNotebook(session.db), session.study, candidates.records, {
        source,
        requireAppType: options.partialGold !== true,
        // --partial-gold: the study's format without the known-app-type rule (intent).
        ...(options.partialGold === true ? { format: withPartialGold(session.study.exampleFormat) } : {}),
        dryRun: options.dryRun === true,
      });
      if (options.json === true) printJson({ study: session.study.dir, file: path.resolve(file), ...outcome });
      else printAdmission(outcome, source);
      return outcome.refused > 0 ? EXIT.admissionRefused : EXIT.ok;
    },
  );
}

/** The text report of an admission: the totals, then each record's verdict with its reasons and notes. */
function printAdmission(outcome: Awaited<ReturnType<typeof admitToStudy>>, source: string): void {
  print(
    `${outcome.dryRun ? 'dry run: would admit' : 'admitted'} ${outcome.admitted}, refused ${outcome.refused} (from ${source}); admitted examples enter the shadow partition`,
  );
  for (const verdict of outcome.verdicts) {
    const where =
      verdict.location !== undefined
        ? ` (${verdict.location})`
        : verdict.line !== undefined
          ? ` (line ${verdict.line})`
          : '';
    print(`  ${verdict.admitted ? 'ADMITTED' : 'REFUSED '} ${verdict.id ?? '(no id)'}${where}`);
    for (const reason of verdict.reasons)
      print(`      ${reason.check}${reason.field !== undefined ? ` ${reason.field}` : ''}: ${reason.message}`);
    for (const note of verdict.notes) print(`      note: ${note}`);
  }
}

/** The study's lease for a corpus command that writes: exit 3 while a run holds the study, or wait with `--wait`. */
function studyLease(session: StudySession, wait: boolean | undefined): SessionLease {
  return {
    db: session.db,
    studyKey: session.study.dir,
    location: studyDatabaseLocation(session.study.dir),
    wait: wait === true,
  };
}

/** `kloop corpus promote <study> <id…> --to PARTITION --by NAME`: moves examples by hand, on the record. */
export async function corpusPromoteCommand(
  studyDir: string,
  ids: string[],
  options: { to: string; by: string; reason?: string; wait?: boolean; json?: boolean },
): Promise<void> {
  if (!(PARTITIONS as readonly string[]).includes(options.to))
    throw new InputError(`unknown partition "${options.to}"; expected one of ${PARTITIONS.join(', ')}`, {
      field: '--to',
    });
  if (options.by.trim() === '')
    throw new InputError('--by names who moves the examples; it may not be empty', { field: '--by' });
  // Moving one example of a leaking pair next to its twin resolves the leak: the study loads with it.
  const session = await openStudy(studyDir, { modelCalls: 'none', quiet: true, partitionLeaks: 'report' });
  await runSession(
    { json: options.json === true, lease: studyLease(session, options.wait), close: () => session.close() },
    async () => {
      const outcome = await promoteExamples(openNotebook(session.db), session.study, ids, {
        to: options.to as (typeof PARTITIONS)[number],
        by: options.by.trim(),
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
      });
      if (options.json === true) {
        printJson({ study: session.study.dir, ...outcome });
        return EXIT.ok;
      }
      print(
        `moved ${outcome.moved.length} example(s) to ${outcome.to} (by ${outcome.by}); recorded in the corpus history`,
      );
      for (const move of outcome.moved) print(`  ${move.id}: ${move.from} → ${move.to}`);
      for (const id of outcome.unchanged) print(`  ${id}: already in ${outcome.to}, nothing recorded`);
      for (const warning of outcome.warnings) print(`WARNING: ${warning}`);
      print(`sizes: ${PARTITIONS.map((name) => `${name} ${outcome.sizes[name]}`).join(', ')}`);
      return EXIT.ok;
    },
  );
}

/** `file` relative to the study folder when it is inside it, else as given: how the corpus history names a source. */
export function relativeToStudy(study: LoadedStudy, file: string): string {
  const relative = path.relative(study.dir, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}
