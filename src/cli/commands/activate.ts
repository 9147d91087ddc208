/**
 * `kloop activate <study> <version> --by NAME`: makes a stored version the
 * active one (a rollback, or forward again), recorded in the notebook with who
 * did it. The runtime (`kloop build`) uses it at once; the next `kloop run`
 * continues from it. Refused (exit 3) while a run holds the study.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { databaseExists, studyDatabaseLocation } from '../../storage/database.ts';
import { STUDY_BUSY_EXIT_CODE } from '../../storage/lease.ts';
import { activateVersionExclusive, checkActor } from '../../storage/activation.ts';
import { loadStudyConfig } from '../../config/config.ts';
import { print, printJson, progress } from '../output.ts';
import { gitNotebookEnabled, syncGitNotebook } from './git-notebook.ts';
import { openStudy } from './study-session.ts';
import { resolveVersion } from './version-ref.ts';

interface ActivateOptions {
  by?: string;
  note?: string;
  json?: boolean;
  git?: boolean;
  quiet?: boolean;
}

export function registerActivateCommand(program: Command): void {
  program
    .command('activate')
    .description(
      'Make a stored version the active one (a rollback), recorded in the notebook with who did it (--by). kloop build uses it at once; the next kloop run continues from it.',
    )
    .argument('<study>', 'study folder')
    .argument('<version>', 'version id (see `kloop history` or `kloop view`), or "seed"')
    .option('--by <name>', 'who activates it (required; recorded)')
    .option('--note <text>', 'why, recorded with the move')
    .option('--git', 'also commit the move to the git notebook (as notebook.git: true in kloop.yaml)')
    .option('--json', 'print one JSON object on stdout')
    .option('--quiet', 'no progress lines on stderr')
    .addHelpText(
      'after',
      '\nExit codes: 0 activated (or already active), 2 bad input (no such version, no --by), 3 a run holds the study.\nExample: kloop activate examples/intent 3 --by ana --note "v4 broke the booking anchors in production"',
    )
    .action(async (studyDir: string, reference: string, options: ActivateOptions) => {
      const by = checkActor(options.by ?? '');
      // A study that never ran has no version to activate: say so, and create no notebook.
      if (existsSync(studyDir)) {
        const file = studyDatabaseLocation(loadStudyConfig(studyDir).dir);
        if (!(await databaseExists(file)))
          throw new InputError('this study has no database yet, so no version to activate: run `kloop run` first', {
            file,
          });
      }
      const session = await openStudy(studyDir, { quiet: true, modelCalls: 'none' });
      try {
        const { study, db } = session;
        const target = await resolveVersion(db, reference, '<version>');
        const mirror = gitNotebookEnabled(study.config, options.git);
        let commits = 0;
        const result = await activateVersionExclusive(
          db,
          study.dir,
          { versionId: target.id, actor: by, ...(options.note !== undefined ? { note: options.note } : {}) },
          {
            ...(mirror && study.config !== undefined
              ? {
                  whileHeld: async () => {
                    commits = (await syncGitNotebook(db, study.config!)).commits.length;
                  },
                }
              : {}),
          },
        );
        if (!result.ok) {
          if (options.json === true)
            printJson({ study: study.dir, ok: false, reason: result.reason, message: result.message });
          else progress(`kloop: ${result.message}`);
          process.exitCode = result.reason === 'busy' ? STUDY_BUSY_EXIT_CODE : 2;
          return;
        }
        if (options.json === true) {
          printJson({
            study: study.dir,
            ok: true,
            activeVersion: result.version.id,
            previousVersion: result.previousVersionId,
            changed: result.changed,
            rollback: result.rollback,
            event: result.event,
            gitCommits: commits,
          });
          return;
        }
        if (!result.changed) print(`version ${result.version.id} is already active; nothing recorded`);
        else
          print(
            `version ${result.version.id} is active${result.rollback ? ` (rolled back from version ${result.previousVersionId})` : result.previousVersionId !== null ? ` (was version ${result.previousVersionId})` : ''}; recorded as "${result.event!.reason}"`,
          );
        if (commits > 0) progress(`kloop: git notebook: ${commits} commit(s)`, options.quiet === true);
      } finally {
        await session.close();
      }
    });
}
