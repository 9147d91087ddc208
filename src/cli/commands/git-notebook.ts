/**
 * The optional git lab notebook, as the commands use it: whether a study
 * mirrors its notebook (`notebook.git: true` in kloop.yaml, or `--git`), and
 * the sync (src/storage/git-mirror.ts), loaded only when it runs so that
 * commands which never mirror do not load the git library.
 */
import path from 'node:path';
import type { StudyDatabase } from '../../storage/study-database.ts';
import type { MirrorSyncResult } from '../../storage/git-mirror.ts';
import type { StudyConfig } from '../../config/config.ts';
import { progress } from '../output.ts';

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

/** The git notebook of a run: `sync()` mirrors the database (one sync at a time, in order); a failed sync is a warning. */
export interface NotebookMirror {
  /** Resolves once this sync, and every one asked before it, is done; never rejects. */
  sync(): Promise<void>;
}

/**
 * The git notebook of a `kloop run`: synced after each accepted decision and
 * at the end (idempotent). A study that does not mirror (neither `--git` nor
 * `notebook.git: true`) gets a mirror whose sync does nothing. A sync that
 * fails leaves the database unaffected and prints a warning (`kloop doctor`
 * reports the gap; the next run fills it).
 */
export function createNotebookMirror(
  db: StudyDatabase,
  config: (Pick<StudyConfig, 'notebook' | 'dir' | 'artifact'> & object) | undefined,
  flag: boolean | undefined,
  quiet: boolean,
): NotebookMirror {
  const mirrorConfig = gitNotebookEnabled(config, flag) ? config : undefined;
  let chain: Promise<void> = Promise.resolve();
  return {
    sync: () => {
      if (mirrorConfig === undefined) return Promise.resolve();
      chain = chain.then(async () => {
        try {
          await syncGitNotebook(db, mirrorConfig);
        } catch (error) {
          progress(
            `kloop: WARNING: the git notebook could not be written (${(error as Error).message}); the database is unaffected, \`kloop doctor\` reports the gap and the next run fills it`,
            quiet,
          );
        }
      });
      return chain;
    },
  };
}
