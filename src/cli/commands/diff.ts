import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { databaseExists, openDatabase, studyDatabaseLocation } from '../../storage/database.ts';
import { print, printJson } from '../output.ts';
import { resolveVersion } from './version-ref.ts';

export function registerDiffCommand(program: Command): void {
  program
    .command('diff')
    .description(
      'Show the difference between two artifact versions of a study as a unified diff (versions by id, or "seed" and "active").',
    )
    .argument('<study>', 'study folder')
    .argument('<a>', 'the older version: an id (see `kloop history`), "seed" or "active"')
    .argument('<b>', 'the newer version')
    .option(
      '--context <n>',
      'lines of context around each change',
      (value) => {
        const lines = Number(value);
        if (!Number.isInteger(lines) || lines < 0)
          throw new InputError(`expected a whole number ≥ 0, got "${value}"`, { field: '--context' });
        return lines;
      },
      3,
    )
    .option('--json', 'print one JSON object on stdout (side-by-side rows, counts and the unified diff)')
    .addHelpText(
      'after',
      '\nExamples:\n  kloop diff examples/intent seed active\n  kloop diff examples/intent 2 5 --json',
    )
    .action(async (studyDir: string, a: string, b: string, options: { json?: boolean; context: number }) => {
      const file = studyDatabaseLocation(path.resolve(studyDir));
      if (!(await databaseExists(file)))
        throw new InputError('this study has no database yet: run `kloop run` first', { file });
      const { diffTexts, unifiedDiff } = await import('../../view/text-diff.ts');
      const db = await openDatabase(file, { readonly: true });
      try {
        const left = await resolveVersion(db, a, '<a>');
        const right = await resolveVersion(db, b, '<b>');
        const unified = unifiedDiff(
          `version ${left.id}`,
          left.text,
          `version ${right.id}`,
          right.text,
          options.context,
        );
        if (options.json === true) {
          const rows = diffTexts(left.text, right.text, options.context);
          printJson({
            a: left.id,
            b: right.id,
            identical: rows.identical,
            added: rows.added,
            removed: rows.removed,
            rows: rows.rows,
            unified,
          });
          return;
        }
        if (left.text === right.text) print(`versions ${left.id} and ${right.id} are identical`);
        else process.stdout.write(unified);
      } finally {
        await db.destroy();
      }
    });
}
