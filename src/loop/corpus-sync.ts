/**
 * The corpus files against the study's lifecycle (DESIGN §3, §4), planned in
 * memory: the study's policy and file examples, the sync a run start (or a
 * corpus command) would write, and the study's corpus and partitions set from
 * members. Used by the lifecycle hooks (src/loop/corpus-lifecycle.ts) and the
 * corpus commands' functions beside them.
 *
 * @module
 */
import type { FileAdmission, PartitionLeak } from '../corpus/file-admission.ts';
import { admitFileRecords, findStudyLeaks, memberLocations, partitionLeakError } from '../corpus/file-admission.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { CorpusMember, CorpusMove, CorpusPolicy, FileExample } from '../corpus/lifecycle.ts';
import { DEFAULT_CORPUS_POLICY, planCorpusSync, resolveCorpus } from '../corpus/lifecycle.ts';
import { corpusVersion } from '../evaluator/evaluator.ts';
import { InputError } from '../errors.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { readStudyState } from './study-state.ts';
import type { ExampleFormat } from '../corpus/example-format.ts';
import type { Notebook } from '../storage/notebook/index.ts';

/** The study's corpus policy (kloop.yaml `corpusPolicy`, or the defaults for studies built in code). */
export function corpusPolicyOf(study: LoadedStudy): CorpusPolicy {
  return study.config?.corpusPolicy ?? { ...DEFAULT_CORPUS_POLICY };
}

/** The study's file examples (for studies built in code: its corpus, as written). */
export function fileExamplesOf(study: LoadedStudy): readonly FileExample[] {
  return study.fileCorpus ?? study.corpus.map((example) => ({ example, file: '(study built in code)' }));
}

/**
 * Replaces the study's corpus and partitions with those the members give.
 * Returns true when the corpus content changed (not only partitions), which
 * changes the evaluator fingerprint.
 */
export function applyCorpusState(study: LoadedStudy, members: readonly CorpusMember[]): boolean {
  const before = corpusVersion(study.corpus);
  const resolved = resolveCorpus(fileExamplesOf(study), members);
  for (const name of PARTITIONS) {
    if (resolved.partitions[name].length === 0) {
      throw new InputError(
        `the corpus lifecycle leaves no example in the ${name} partition (see \`kloop corpus status\`)`,
        { partition: name, studyPath: study.dir },
      );
    }
  }
  study.corpus = resolved.corpus;
  study.partitions = resolved.partitions;
  return corpusVersion(resolved.corpus) !== before;
}

/** The corpus files against the stored members, planned in memory: what a sync would write. */
export interface FileSyncPlan {
  /** The members as they must now be. */
  members: CorpusMember[];
  changed: CorpusMember[];
  moves: CorpusMove[];
  /** The admission of the files' new records; undefined for studies built in code. */
  admission?: FileAdmission;
  leaks: PartitionLeak[];
  /** The file examples the study uses (refused records left out). */
  files: readonly FileExample[];
}

/** The admission options of the study's corpus files: its record format (whose task applies corpusPolicy.partialGold). */
function fileAdmissionOptions(study: LoadedStudy): { format: ExampleFormat } {
  return { format: study.exampleFormat };
}

/**
 * Plans the sync of the corpus files with `stored` (pure but for reading the
 * study): new file records pass admission (`admitFileRecords`), the accepted
 * ones are reconciled with the members (`planCorpusSync`), and the corpus
 * that results is checked for leaks between partitions.
 */
export function planFileSync(
  study: LoadedStudy,
  stored: readonly CorpusMember[],
  at: string,
  options: { deferNew?: boolean } = {},
): FileSyncPlan {
  const records = study.corpusAdmission?.admission.records;
  const admission =
    records === undefined
      ? undefined
      : admitFileRecords(records, stored, { ...fileAdmissionOptions(study), deferNew: options.deferNew === true });
  const files = admission?.accepted ?? fileExamplesOf(study);
  const plan = planCorpusSync(files, stored, at);
  const leaks =
    admission === undefined
      ? []
      : findStudyLeaks(resolveCorpus(files, plan.members).corpus, memberLocations(files, plan.members), admission);
  return {
    members: plan.members,
    changed: plan.changed,
    moves: plan.moves,
    ...(admission !== undefined ? { admission } : {}),
    leaks,
    files,
  };
}

/** The InputError a run raises on leaks between partitions, naming both records of each (`partitionLeakError`). */
export function leakError(leaks: readonly PartitionLeak[], study: LoadedStudy): InputError {
  return partitionLeakError(leaks, {
    file: study.config?.configPath ?? study.dir,
    field: study.exampleFormat.inputField,
  });
}

/**
 * Refuses a corpus command while a round is open (a run in progress, or one
 * that stopped mid-round): partitions change only between rounds.
 *
 * @param what what to do instead, ending the message (`'move examples between runs'`)
 * @throws InputError naming the open round
 */
export async function refuseWhileRoundOpen(notebook: Notebook, study: LoadedStudy, what: string): Promise<void> {
  const state = await readStudyState(notebook);
  if (state.openRound !== undefined && state.openRound !== null) {
    throw new InputError(
      `round ${state.openRound.round} of this study is open (a run is in progress, or stopped mid-round): ${what}`,
      { studyPath: study.dir },
    );
  }
}
