/** `kloop export <study>`: write an artifact version (default the best) to a file, atomically. */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { databaseExists, openDatabase, studyDatabaseLocation } from '../../storage/database.ts';
import { loadStudyConfig } from '../../config/config.ts';
import type { ExportSelector } from '../../report/export.ts';
import { defaultExportPath, selectExportVersion, writeFileAtomicSync } from '../../report/export.ts';
import { print, printJson } from '../output.ts';

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description(
      'Write an artifact version to a file: the best (the active version, default) or one by id. The file is written to a temporary ' +
        'name and renamed, so a kill leaves the old file or the new one. Default file: <study>/.kloop/exports/<artifact>.v<id><ext>; ' +
        '`--out -` writes the text to stdout.',
    )
    .argument('<study>', 'study folder')
    .option('--best', 'the best version: the active one the runs accepted (default)')
    .option('--version <id>', 'the artifact version with this id (see `kloop history` / `kloop show`)', parseVersionId)
    .option('--out <file>', 'file to write (its folder must exist), or - for stdout')
    .option('--json', 'print one JSON object describing the export on stdout')
    .action(async (studyDir: string, options: { best?: boolean; version?: number; out?: string; json?: boolean }) => {
      if (options.best === true && options.version !== undefined)
        throw new InputError('choose --best or --version, not both', { field: '--version' });
      const dir = path.resolve(studyDir);
      if (!existsSync(dir)) throw new InputError('the study folder does not exist', { file: studyDir });
      const file = studyDatabaseLocation(dir);
      if (!(await databaseExists(file)))
        throw new InputError('this study has no database yet: run `kloop run` first', { file });
      const selector: ExportSelector =
        options.version !== undefined ? { kind: 'version', id: options.version } : { kind: 'best' };
      const db = await openDatabase(file, { readonly: true });
      try {
        const version = await selectExportVersion(db, selector);
        if (options.out === '-') {
          if (options.json === true)
            throw new InputError('--json describes a file export; it cannot be combined with --out -', {
              field: '--json',
            });
          process.stdout.write(version.text);
          return;
        }
        let out: string;
        if (options.out !== undefined) out = path.resolve(options.out);
        else {
          out = defaultExportPath(dir, artifactPathOf(dir), version.id);
          mkdirSync(path.dirname(out), { recursive: true });
        }
        writeFileAtomicSync(out, version.text);
        const payload = {
          study: dir,
          file: out,
          version: version.id,
          source: version.source,
          hash: version.hash,
          bytes: Buffer.byteLength(version.text, 'utf8'),
          best: selector.kind === 'best',
        };
        if (options.json === true) printJson(payload);
        else
          print(
            `exported version ${version.id} (${version.source}, ${payload.bytes} bytes, hash ${version.hash.slice(0, 12)}) to ${out}`,
          );
      } finally {
        await db.destroy();
      }
    });
}

/** The study's artifact file name, for the default export name; `artifact` when kloop.yaml cannot be read. */
function artifactPathOf(dir: string): string {
  try {
    return loadStudyConfig(dir).artifact;
  } catch {
    return 'artifact';
  }
}

function parseVersionId(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new InputError(`a version id is a positive whole number, got "${value}"`, { field: '--version' });
  return parsed;
}
