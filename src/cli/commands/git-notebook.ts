/**
 * The optional git lab notebook, as the commands use it: whether a study
 * mirrors its notebook (`notebook.git: true` in kloop.yaml, or `--git`), and
 * the sync (src/storage/git-mirror.ts), loaded only when it runs so that
 * commands which never mirror do not load the git library.
 */
import path from 'node:path';
import type { StudyDatabase } from '../../storage/database.ts';
import type { MirrorSyncResult } from '../../storage/git-mirror.ts';
import type { StudyConfig } from '../../config/config.ts';

/** Whether the study mirrors its notebook to git: `--git`, or `notebook.git: true`. */
export function gitNotebookEnabled(
  config: Pick<StudyConfig, 'notebook'> | undefined,
  flag: boolean | undefined,
): boolean {
  return flag === true || config?.notebook?.git === true;
}

/** Commits every move of the active version not yet mirrored (see `syncGitMirror`). */
export async function syncGitNotebook(
  db: StudyDatabase,
  config: Pick<StudyConfig, 'dir' | 'artifact'>,
): Promise<MirrorSyncResult> {
  const { syncGitMirror } = await import('../../storage/git-mirror.ts');
  return syncGitMirror(db, { studyDir: config.dir, artifactFileName: path.basename(config.artifact) });
}
