/**
 * `kloop migrate-storage <study> --to postgres://…`: copies a study's SQLite
 * notebook (`.kloop/kloop.db`) into an empty PostgreSQL schema, every row
 * with its id (src/storage/migrate-storage.ts), while holding the study's
 * lease (no run may write meanwhile: exit 3 when one holds it). The SQLite
 * file is kept; point the study at the new database afterwards (`storage:`
 * in kloop.yaml, or `--db`). See docs/storage.md.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { describeLocation, openDatabase, studyDatabasePath } from '../../storage/database.ts';
import { acquireLease, releaseLease } from '../../storage/lease.ts';
import { isPostgresUrl, parseStorageTarget } from '../../storage/location.ts';
import { copyNotebook } from '../../storage/migrate-storage.ts';
import { print, printJson } from '../output.ts';

export function registerMigrateStorageCommand(program: Command): void {
  program
    .command('migrate-storage')
    .description(
      "Copy a study's SQLite notebook (.kloop/kloop.db) into an empty PostgreSQL schema, every row with its id; then point the study at it (storage: in kloop.yaml, or --db). The SQLite file is kept.",
    )
    .argument('<study>', 'study folder whose .kloop/kloop.db is copied')
    .requiredOption(
      '--to <url>',
      'the PostgreSQL database: postgres://user@host:5432/db (?schema=NAME for one schema; the password in PGPASSWORD or ~/.pgpass)',
    )
    .option('--json', 'print one JSON object on stdout')
    .action(async (studyDir: string, options: { to: string; json?: boolean }) => {
      const dir = path.resolve(studyDir);
      if (!existsSync(dir)) throw new InputError('the study folder does not exist', { file: studyDir });
      if (!isPostgresUrl(options.to))
        throw new InputError('expected a postgres:// or postgresql:// URL', { field: '--to' });
      parseStorageTarget(options.to, '--to');
      const file = studyDatabasePath(dir);
      if (!existsSync(file))
        throw new InputError('this study has no SQLite notebook to copy (.kloop/kloop.db): nothing to migrate', {
          file,
        });
      const source = await openDatabase(file);
      try {
        const lease = await acquireLease(source, { studyKey: dir });
        try {
          const target = await openDatabase(options.to);
          try {
            const result = await copyNotebook(source, target);
            const to = describeLocation(options.to);
            if (options.json === true)
              printJson({ study: dir, from: file, to, rows: result.rows, tables: result.tables });
            else {
              print(
                `copied ${result.rows} row(s) of ${Object.keys(result.tables).length} tables from ${file} to ${to}`,
              );
              print(
                `now point the study at it: storage: ${to} in ${path.join(dir, 'kloop.yaml')} (or --db on each command); ${file} is kept as it was`,
              );
            }
          } finally {
            await target.destroy();
          }
        } finally {
          await releaseLease(source, lease);
        }
      } finally {
        await source.destroy();
      }
    });
}
