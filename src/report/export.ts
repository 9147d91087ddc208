/**
 * Exporting an artifact version from the lab notebook to a file.
 *
 * The exported text is byte-for-byte the stored version (its content hash is
 * checked before writing), written through a temporary file, flushed and
 * renamed over the target, so a kill leaves the old file or the new one,
 * never half of one. Reloaded in a fresh process and re-evaluated, it gives
 * the scores the run reported (DESIGN.md §6).
 */
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { contentHash } from '../artifact/content-hash.ts';
import { InputError, StorageError } from '../errors.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import { getRegistryVersion, getVersion } from '../storage/registry.ts';

/** Which version to export: the best (the registry's active version) or one by id. */
export type ExportSelector = { kind: 'best' } | { kind: 'version'; id: number };

/**
 * The version a selector names.
 *
 * @throws InputError (exit 2) when the study has no version yet or no version with that id
 * @throws StorageError when the stored text does not match its content hash
 */
export async function selectExportVersion(db: StudyDatabase, selector: ExportSelector): Promise<ArtifactVersion> {
  const version = selector.kind === 'best' ? await getRegistryVersion(db, 'active') : await getVersion(db, selector.id);
  if (version === undefined) {
    throw selector.kind === 'best'
      ? new InputError('the study has no active version yet: run `kloop run` first', { field: '--best' })
      : new InputError(`no artifact version ${selector.id} in this study (see \`kloop history\`)`, {
          field: '--version',
        });
  }
  if (contentHash(version.text) !== version.hash) {
    throw new StorageError(
      `artifact version ${version.id} does not match its content hash: the database is damaged (run \`kloop doctor\`)`,
    );
  }
  return version;
}

/**
 * Default export file: `<study>/.kloop/exports/<artifact name>.v<id><extension>`,
 * e.g. `.kloop/exports/playbook.v7.yaml`.
 */
export function defaultExportPath(studyDir: string, artifactPath: string, versionId: number): string {
  const extension = path.extname(artifactPath);
  const base = path.basename(artifactPath, extension) || 'artifact';
  return path.join(path.resolve(studyDir), '.kloop', 'exports', `${base}.v${versionId}${extension}`);
}

/**
 * Writes `content` (UTF-8) to `file` atomically, with write-file-atomic: a
 * temporary file in the same folder, fsync, rename over `file` (a kill leaves
 * the old file or the new one; the temporary file is removed on failure).
 *
 * @throws InputError when the folder does not exist or cannot be written
 */
export function writeFileAtomicSync(file: string, content: string): void {
  try {
    writeFileAtomic.sync(file, content, { encoding: 'utf8', fsync: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'its folder does not exist'
        : code === 'EACCES' || code === 'EROFS' || code === 'EPERM'
          ? 'its folder is read-only'
          : (error as Error).message;
    throw new InputError(`cannot write the export: ${reason}`, { file, cause: error });
  }
}
