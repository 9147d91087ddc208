/**
 * `kloop reset <study> [--keep-corpus-history] [--yes]`: starts a study afresh
 * (src/study/reset-study.ts). The previous notebook is moved into
 * `.kloop/backups/<time>/`, not deleted; moving its files back undoes the reset.
 *
 * Asks for confirmation on a terminal; elsewhere (scripts, CI) it refuses
 * without `--yes` (exit 2, nothing changed). Refuses while a run holds the
 * study (exit 3).
 */
import { assertStudyWritable } from './study-session.ts';
import { createInterface } from 'node:readline/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { openDatabase, studyDatabaseLocation, studyDatabasePath } from '../../storage/database.ts';
import { isPostgresUrl } from '../../storage/location.ts';
import { acquireLease, releaseLease } from '../../storage/lease.ts';
import { loadStudyConfig } from '../../config/config.ts';
import { hasNotebook, notebookCounts, readCorpusHistoryRows, resetNotebook } from '../../study/reset-study.ts';
import { print, printJson } from '../output.ts';

export function registerResetCommand(program: Command): void {
  program
    .command('reset')
    .description(
      'Start a study afresh: its lab notebook (experiments, versions, calibrations, cache, corpus lifecycle) is moved to .kloop/backups/<time>/ and the next run starts from the seed artifact and the corpus files. Asks for confirmation (or --yes).',
    )
    .argument('<study>', 'study folder')
    .option(
      '--keep-corpus-history',
      'carry the corpus lifecycle over: partitions as they stand, admitted examples, exposures and every recorded move',
    )
    .option('--yes', 'do not ask for confirmation')
    .option('--wait', 'wait for a run in progress to finish instead of refusing (exit 3)')
    .option('--json', 'print one JSON object on stdout')
    .action(resetCommand);
}

/** `kloop reset`'s action: moves the notebook aside (after confirmation, or --yes) while holding the study's lease. */
async function resetCommand(
  studyDir: string,
  options: { keepCorpusHistory?: boolean; yes?: boolean; wait?: boolean; json?: boolean },
): Promise<void> {
  const dir = loadStudyConfig(studyDir).dir; // a study folder, checked
  if (isPostgresUrl(studyDatabaseLocation(dir))) {
    throw new InputError(
      "kloop reset moves the SQLite notebook's files aside; this study keeps its notebook in PostgreSQL: point it at a new schema (storage: …?schema=NEW) to start afresh, or drop the schema",
      { field: 'storage', code: 'input.storage' },
    );
  }
  if (!hasNotebook(dir)) {
    const payload = { study: dir, reset: false, detail: 'the study has no notebook yet: nothing to reset' };
    if (options.json === true) printJson(payload);
    else print(`${dir}: ${payload.detail}`);
    return;
  }
  // Reset moves the notebook's files aside: refused up front, as every writing command, when it may not.
  assertStudyWritable(dir, 'kloop reset');
  const db = await openDatabase(studyDatabasePath(dir));
  let closed = false;
  try {
    const lease = await acquireLease(db, { studyKey: dir, wait: options.wait === true });
    const counts = await notebookCounts(db);
    const keep = options.keepCorpusHistory === true ? await readCorpusHistoryRows(db) : null;
    const summary = `${counts.experiments} experiment(s) in ${counts.runs} run(s), ${counts.artifactVersions} artifact version(s), ${counts.calibrations} calibration(s), ${counts.reviewItems} review item(s), ${counts.signals} signal(s)`;
    const corpusLine =
      keep !== null
        ? `the corpus history (${counts.corpusMembers} members, ${counts.corpusEvents} events) is kept`
        : `the corpus history (${counts.corpusMembers} members, ${counts.corpusEvents} events) goes too: the next run takes the partitions the corpus files give`;
    if (options.yes !== true) {
      if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
        await releaseLease(db, lease);
        throw new InputError(
          `reset moves the notebook aside (${summary}; ${corpusLine}): pass --yes to confirm; nothing was changed`,
          { field: '--yes', studyPath: dir },
        );
      }
      const prompt = createInterface({ input: process.stdin, output: process.stdout });
      const answer = await prompt.question(
        `Reset ${dir}? This moves aside ${summary}; ${corpusLine}. Type "yes" to confirm: `,
      );
      prompt.close();
      if (answer.trim().toLowerCase() !== 'yes') {
        await releaseLease(db, lease);
        print('not reset: nothing was changed');
        return;
      }
    }
    // Our lease stays in the old notebook while it is moved (a run starting meanwhile sees it held).
    await db.destroy();
    closed = true;
    const outcome = await resetNotebook(dir, keep, new Date().toISOString());
    const payload = {
      study: dir,
      reset: true,
      backup: outcome.backup,
      moved: outcome.moved,
      removed: counts,
      kept: outcome.kept,
    };
    if (options.json === true) {
      printJson(payload);
      return;
    }
    print(`reset ${dir}: moved ${summary} to ${path.relative(process.cwd(), outcome.backup) || outcome.backup}`);
    print(
      outcome.kept !== null
        ? `kept the corpus history: ${outcome.kept.members} members, ${outcome.kept.events} events (kloop corpus status)`
        : 'the next run records the partitions the corpus files give',
    );
    print(`to undo: move the files of ${outcome.backup} back into ${path.dirname(studyDatabasePath(dir))}`);
  } finally {
    if (!closed) await db.destroy();
  }
}
