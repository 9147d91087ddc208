/**
 * `kloop reset`: starts a study afresh. The lab notebook (`.kloop/`: the study
 * database with its experiments, runs, artifact versions and active pointer,
 * calibrations, stored evaluations and response cache, review queue and
 * signals, and the best-artifact files) is moved aside into
 * `.kloop/backups/<time>/`, never deleted: to undo a reset, move those files
 * back into `.kloop/`. The next run starts from the seed artifact.
 *
 * With `keepCorpusHistory`, the corpus lifecycle is carried into the new
 * notebook: every member (partitions as they stand, admitted examples, shadow
 * exposures) and every event, each event's experiment id moved to
 * `details.previousExperimentId` (those experiments are gone, so in the new
 * notebook every earlier move counts as "before the first experiment"), and
 * a `reset` event that records the exposures and the rounds each shadow
 * member had served at the reset (so `kloop corpus at` recounts exposures
 * from there, and graduation by rounds counts the rounds served before it).
 */
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { readCorpusMembers } from '../corpus/lifecycle-store.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { CorpusHistoryTables } from '../storage/notebook/reset-store.ts';
import { readCorpusHistoryTables, writeCorpusHistory } from '../storage/notebook/reset-store.ts';
import { openNotebook } from '../storage/notebook/index.ts';

export type { NotebookCounts } from '../storage/notebook/reset-store.ts';
export { notebookCounts } from '../storage/notebook/reset-store.ts';

/** The corpus lifecycle rows a reset may carry over. */
export interface CorpusHistoryRows extends CorpusHistoryTables {
  /** Rounds each shadow member has served in shadow at the reset (by example id). */
  shadowRounds?: Record<string, number>;
}

/** Reads the corpus lifecycle tables as they are, with the rounds each shadow member has served. */
export async function readCorpusHistoryRows(db: StudyDatabase): Promise<CorpusHistoryRows> {
  return {
    ...(await readCorpusHistoryTables(db)),
    shadowRounds: Object.fromEntries(
      (await readCorpusMembers(openNotebook(db)))
        .filter((member) => member.partition === 'shadow')
        .map((member) => [member.exampleId, member.shadowRounds ?? 0]),
    ),
  };
}

/** The outcome of a reset. */
export interface ResetOutcome {
  /** Where the previous notebook now is. */
  backup: string;
  /** Files moved into the backup (names inside `.kloop/`). */
  moved: string[];
  /** The corpus history carried over (null without keepCorpusHistory). */
  kept: { members: number; events: number } | null;
}

/**
 * Moves the notebook aside and, with `keep`, writes the corpus history into a
 * new notebook. The caller must hold the study's lease and have closed its
 * connection to the database.
 *
 * @param studyDir the study folder
 * @param keep the corpus rows to carry over, or null
 * @param at ISO 8601 time of the reset (also names the backup folder)
 */
export async function resetNotebook(
  studyDir: string,
  keep: CorpusHistoryRows | null,
  at: string,
): Promise<ResetOutcome> {
  const folder = path.dirname(studyDatabasePath(studyDir));
  const backup = path.join(folder, 'backups', at.replace(/[:.]/g, '-'));
  mkdirSync(backup, { recursive: true });
  const moved: string[] = [];
  for (const name of readdirSync(folder)) {
    if (name === 'backups' || name === '.gitignore') continue;
    renameSync(path.join(folder, name), path.join(backup, name));
    moved.push(name);
  }
  if (keep === null) return { backup, moved, kept: null };
  const db = await openDatabase(studyDatabasePath(studyDir));
  try {
    const exposures = Object.fromEntries(
      keep.members
        .filter((member) => member.shadow_exposures > 0)
        .map((member) => [member.example_id, Number(member.shadow_exposures)]),
    );
    // The rounds each shadow member has served so far: the new notebook's rounds start at 0, so they are carried here.
    const shadowRounds = Object.fromEntries(Object.entries(keep.shadowRounds ?? {}).filter(([, rounds]) => rounds > 0));
    await writeCorpusHistory(db, keep, {
      reason: `the study was reset (kloop reset --keep-corpus-history); the previous notebook is in ${path.relative(studyDir, backup)}`,
      details: { backup, exposures, shadowRounds },
      at,
    });
  } finally {
    await db.destroy();
  }
  return { backup, moved, kept: { members: keep.members.length, events: keep.events.length } };
}

/** Whether the study has a notebook to reset. */
export function hasNotebook(studyDir: string): boolean {
  return existsSync(studyDatabasePath(studyDir));
}
