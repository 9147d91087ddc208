/**
 * Loads and validates a study folder: `kloop.yaml`, `program.md`, the
 * artifact and the corpus. Every problem is an {@link InputError} naming the
 * file, line and field; nothing is written.
 */
import path from 'node:path';
import type { Example, PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { admitFileRecords, findStudyLeaks, memberLocations, partitionLeakError } from '../corpus/file-admission.ts';
import { readLocatedCorpusFile } from '../corpus/importers/public-format.ts';
import type { CorpusMember, FileExample } from '../corpus/lifecycle.ts';
import type { FileAdmission, PartitionLeak } from '../corpus/file-admission.ts';
import { planCorpusSync, resolveCorpus } from '../corpus/lifecycle.ts';
import { readCorpusMembersAt, readCorpusMembersFile } from '../corpus/lifecycle-file.ts';
import { isPostgresUrl } from '../storage/location.ts';
import { readableDatabaseFile, studyDatabaseLocation } from '../storage/database.ts';
import { InputError } from '../errors.ts';
import { ERROR_DRIVEN_PROPOSER_ID, OFFLINE_EXECUTOR_ID } from '../tasks/intent/offline/ids.ts';
import { checkConstraints, loadProgram } from '../program/program.ts';
import type { Proposer } from '../proposers/proposer.ts';
import type { Executor } from '../executors/executor.ts';
import { parsePlaybook } from '../tasks/intent/offline/playbook.ts';
import type { Task } from '../tasks/task.ts';
import type { ExampleFormat } from '../corpus/example-format.ts';
import type { StudyConfig } from '../config/config.ts';
import { loadStudyConfig } from '../config/config.ts';
import type { ComposedTask } from './compose.ts';
import {
  checkComposition,
  composeExecutor,
  composeHeadline,
  composeProposer,
  composeSectionsOf,
  composeTask,
  composeTaskAsync,
  composeWeights,
} from './compose.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { composeStudySettings } from './study-settings.ts';
import { checkEditableSections, checkPromptTemplate, readTextFile } from './study-files.ts';

/** What a hook that builds an executor or a proposer is given besides the config. */
export interface CompositionContext {
  /** The study's task, built from `task:`. */
  task: Task;
}

/**
 * Hooks to build the executor and proposer with what the config alone does
 * not give (the LLM providers: src/study/llm-plugins.ts). Without them,
 * `src/study/compose.ts` builds both from the config.
 */
export interface StudyPlugins {
  createExecutor?: (config: StudyConfig, context?: CompositionContext) => Executor;
  createProposer?: (config: StudyConfig, context?: CompositionContext) => Proposer;
  /** Splits an artifact into named sections for the editable-section constraint. */
  sectionsOf?: (text: string) => Record<string, string>;
}

/**
 * Ids of the offline executor and the error-driven proposer, as their modules
 * declare them (`OFFLINE_EXECUTOR_ID`, `ERROR_DRIVEN_PROPOSER_ID`, in a module
 * of their own without the NLP library). Both implementations import the NLP
 * library (compromise, about 0.3 s), so the study loads them on first use
 * (`createLazyOfflineExecutor`, `createLazyErrorDrivenProposer` in
 * src/study/compose.ts): a command that only reads the notebook (`kloop
 * status`, which shows the evaluator fingerprint these ids are part of)
 * never pays for it.
 */
export { ERROR_DRIVEN_PROPOSER_ID, OFFLINE_EXECUTOR_ID };
export { createLazyErrorDrivenProposer, createLazyOfflineExecutor } from './compose.ts';
export { checkPromptTemplate, readTextFile } from './study-files.ts';

/**
 * Reads every corpus file of the config and checks ids, records (the task's
 * schemas, with file, line and field) and partitions.
 *
 * @param format how records are read; default the format of the config's task
 */
export function loadCorpus(config: StudyConfig, format?: ExampleFormat): Example[] {
  return loadCorpusFiles(config, format).map((entry) => entry.example);
}

/** {@link loadCorpus}, with the file (relative to the study folder when inside it) each example came from. */
export function loadCorpusFiles(
  config: StudyConfig,
  format: ExampleFormat = composeTask(config).exampleFormat,
): FileExample[] {
  const examples: FileExample[] = [];
  const seen = new Map<string, string>();
  if (config.corpusFiles.length === 0) {
    throw new InputError(`no corpus file matches ${config.corpus.join(', ')}`, {
      file: config.configPath,
      field: 'corpus',
    });
  }
  for (const file of config.corpusFiles) {
    // One parse gives the examples and the line of each (messages name a record by file:line).
    const result = readLocatedCorpusFile(file, format);
    if (!result.ok) {
      const first = result.errors[0]!;
      const more = result.errors.length > 1 ? ` (and ${result.errors.length - 1} more errors)` : '';
      throw new InputError(`${first.message}${more}`, {
        file: first.file,
        ...(first.line !== undefined ? { line: first.line } : {}),
        ...(first.field !== undefined ? { field: first.field } : {}),
      });
    }
    result.examples.forEach((example, index) => {
      const earlier = seen.get(example.id);
      if (earlier !== undefined)
        throw new InputError(`duplicate example id "${example.id}" (also in ${earlier})`, { file, field: 'id' });
      seen.set(example.id, file);
      const relative = path.relative(config.dir, file);
      const line = result.lines[index];
      examples.push({
        example,
        file: relative.startsWith('..') || path.isAbsolute(relative) ? file : relative,
        ...(line !== undefined ? { line } : {}),
      });
    });
  }
  if (examples.length === 0) {
    const files = config.corpusFiles.map((file) => path.relative(config.dir, file)).join(', ');
    throw new InputError(
      `the corpus is empty: ${files} ${config.corpusFiles.length === 1 ? 'holds' : 'hold'} no example`,
      { file: config.configPath, field: 'corpus' },
    );
  }
  return examples;
}

/** Options of {@link loadStudy}. */
export interface LoadStudyOptions {
  /**
   * What a leak between partitions does (a goal identical or a near-duplicate
   * in two partitions, src/corpus/file-admission.ts): `'error'` (default)
   * refuses to load the study (InputError, code `partition_leak`, both
   * records named by file:line); `'report'` loads it and lists the leaks in
   * `corpusAdmission.leaks` (for the commands that show and resolve them:
   * `kloop corpus status`, `kloop corpus promote`, `kloop corpus at`).
   */
  partitionLeaks?: 'error' | 'report';
}

/** The study's corpus as the corpus lifecycle has it (see {@link resolveStudyCorpus}). */
export interface StudyCorpusState {
  /** The admission of the corpus files' records new to the study. */
  admission: FileAdmission;
  /** The members the study database records (none before the first run). */
  members: CorpusMember[];
  /** The file examples the study uses (refused records left out). */
  fileCorpus: FileExample[];
  corpus: Example[];
  partitions: Record<PartitionName, Example[]>;
  /** Goals in two partitions (src/corpus/file-admission.ts `findStudyLeaks`). */
  leaks: PartitionLeak[];
}

/**
 * The corpus files' records against the study database, read-only:
 * partitions as the corpus lifecycle has them (initialised from the files;
 * src/corpus/lifecycle.ts), records new to the study through the admission
 * gate (refused ones left out; src/corpus/file-admission.ts), and the leaks
 * between partitions. Throws nothing about leaks: the caller decides.
 *
 * @throws StorageError when the study database exists but cannot be read
 */
export function resolveStudyCorpus(
  config: StudyConfig,
  records: readonly FileExample[],
  format: ExampleFormat,
  preread?: CorpusMember[],
): StudyCorpusState {
  const members = preread ?? readSqliteCorpusMembers(config);
  const admission = admitFileRecords(records, members, { format });
  const fileCorpus = admission.accepted;
  const synced = planCorpusSync(fileCorpus, members, new Date().toISOString()).members;
  const { corpus, partitions } = resolveCorpus(fileCorpus, synced);
  const leaks = findStudyLeaks(corpus, memberLocations(fileCorpus, synced), admission);
  return { admission, members, fileCorpus, corpus, partitions, leaks };
}

/** Groups examples by named partition. */
export function splitPartitions(examples: readonly Example[]): Record<PartitionName, Example[]> {
  const partitions = Object.fromEntries(PARTITIONS.map((name) => [name, [] as Example[]])) as Record<
    PartitionName,
    Example[]
  >;
  for (const example of examples) partitions[example.partition].push(example);
  return partitions;
}

/**
 * Loads a study folder.
 *
 * Partitions come from the corpus lifecycle when the study database
 * (`.kloop/kloop.db`) records one — graduated and rotated examples, examples
 * admitted with `kloop corpus add` — read read-only; otherwise from the
 * corpus files' `partition` fields (docs/corpus.md).
 *
 * @throws InputError on any bad input (file, line and field named), including
 *   an anchor that left the corpus files, and a goal in two partitions (code
 *   `partition_leak`, both records named; see {@link LoadStudyOptions})
 * @throws StorageError when the study database exists but cannot be read
 */
export function loadStudy(studyDir: string, plugins: StudyPlugins = {}, options: LoadStudyOptions = {}): LoadedStudy {
  const config = loadStudyConfig(studyDir);
  return buildStudy(studyDir, config, composeTask(config), plugins, options);
}

/**
 * {@link loadStudy} for every task, a custom one included: its scorer module
 * is loaded (asynchronously) from the study folder first. The CLI loads
 * studies with it.
 *
 * @throws InputError as {@link loadStudy}, and the custom module's errors (code `custom_module`, naming the file)
 * @throws StorageError when the study database exists but cannot be read
 */
export async function loadStudyAsync(
  studyDir: string,
  plugins: StudyPlugins = {},
  options: LoadStudyOptions = {},
): Promise<LoadedStudy> {
  const config = loadStudyConfig(studyDir);
  const composed = await composeTaskAsync(config);
  // A PostgreSQL notebook is read asynchronously, before the study is built (buildStudy reads a SQLite one itself).
  const location = studyDatabaseLocation(config.dir);
  const members = isPostgresUrl(location) ? await readCorpusMembersAt(location) : undefined;
  return buildStudy(studyDir, config, composed, plugins, options, members);
}

/**
 * The corpus lifecycle of a SQLite notebook, read synchronously.
 *
 * @throws InputError for a study whose notebook is in PostgreSQL (read by {@link loadStudyAsync})
 */
function readSqliteCorpusMembers(config: StudyConfig): CorpusMember[] {
  const location = studyDatabaseLocation(config.dir);
  if (isPostgresUrl(location)) {
    throw new InputError(
      'this study keeps its notebook in PostgreSQL: load it with loadStudyAsync (the synchronous loadStudy reads only SQLite notebooks)',
      { file: config.configPath, field: 'storage' },
    );
  }
  return readCorpusMembersFile(readableDatabaseFile(location));
}

/**
 * The artifact's text; an offline study's artifact must also be a readable playbook.
 *
 * @throws InputError naming the artifact file (and the playbook's line and field)
 */
function readStudyArtifact(config: StudyConfig): string {
  const artifactText = readTextFile(config.artifact, 'the artifact file');
  if (config.executor.kind === 'offline') {
    const parsed = parsePlaybook(artifactText, config.artifact);
    if (!parsed.ok) {
      const first = parsed.errors[0]!;
      throw new InputError(first.message, { file: config.artifact, line: first.line, field: first.path });
    }
  }
  return artifactText;
}

/**
 * Refuses a corpus with an empty partition, naming the records admission refused.
 *
 * @param hasLifecycle whether the notebook has a corpus lifecycle (the partitions are as it stands)
 * @throws InputError (field `corpus`)
 */
function requireEveryPartition(
  config: StudyConfig,
  partitions: Record<PartitionName, Example[]>,
  admission: FileAdmission,
  hasLifecycle: boolean,
): void {
  for (const name of PARTITIONS) {
    if (partitions[name].length === 0) {
      const refused =
        admission.refused.length > 0
          ? `; ${admission.refused.length} record(s) of the corpus files were refused by admission (${admission.refused.map((record) => `${record.location} ${record.reasons[0]?.check ?? ''}`).join(', ')})`
          : '';
      throw new InputError(
        `the corpus has no example in the ${name} partition${hasLifecycle ? ' (as the corpus lifecycle stands: `kloop corpus status`)' : ''}${refused}`,
        { file: config.configPath, field: 'corpus' },
      );
    }
  }
}

/** The study from its config and task: every file checked, then the database's corpus lifecycle read. */
function buildStudy(
  studyDir: string,
  config: StudyConfig,
  composed: ComposedTask,
  plugins: StudyPlugins,
  options: LoadStudyOptions,
  preread?: CorpusMember[],
): LoadedStudy {
  const { task, exampleFormat } = composed;
  // The weights are checked before any file is read (the settings below compose them again, with the rest).
  composeWeights(task, config);
  checkComposition(config, task);
  const program = loadProgram(config.program);
  const artifactText = readStudyArtifact(config);
  // The artifact's sections follow from the config (compose.ts); a plugin's splitter only for a study built around one.
  const sectionsOf =
    plugins.sectionsOf !== undefined && config.executor.kind === 'llm' ? plugins.sectionsOf : composeSectionsOf(config);
  const mechanical = program.mechanical;
  // Every file is checked before the study database is read: a refused input leaves the notebook's files as they were.
  checkEditableSections(mechanical.editableSections, artifactText, sectionsOf, config, program.lines.constraints);
  // A prompt template's placeholders: read before the corpus, filled for every record after it.
  if (config.executor.kind === 'llm') checkPromptTemplate(config, artifactText, []);
  const records = loadCorpusFiles(config, exampleFormat);
  if (config.executor.kind === 'llm')
    checkPromptTemplate(
      config,
      artifactText,
      records.map((record) => record.example),
    );
  const { admission, members, fileCorpus, corpus, partitions, leaks } = resolveStudyCorpus(
    config,
    records,
    exampleFormat,
    preread,
  );
  // A goal in two partitions is an error, naming both records.
  if (leaks.length > 0 && options.partitionLeaks !== 'report')
    throw partitionLeakError(leaks, { file: config.configPath, field: exampleFormat.inputField });
  requireEveryPartition(config, partitions, admission, members.length > 0);
  const context: CompositionContext = { task };
  const executor = plugins.createExecutor?.(config, context) ?? composeExecutor(config, task);
  const proposer = plugins.createProposer?.(config, context) ?? composeProposer(config, task);
  const settings = composeStudySettings({
    task,
    deterministic: executor.deterministic,
    gate: config.gate,
    stopping: config.stopping,
    weights: config.weights,
    candidatesPerRound: config.proposer.candidatesPerRound,
    concurrency: config.proposer.concurrency,
    seed: config.seed,
    configPath: config.configPath,
    lines: config.lines,
  });
  return {
    config,
    dir: path.resolve(studyDir),
    artifactPath: config.artifact,
    artifactText,
    instructions: program.instructions,
    constraintsText: program.constraints,
    constraints: {
      editableSections: mechanical.editableSections ?? [],
      maxArtifactCharacters: mechanical.maxArtifactCharacters,
      check: (incumbentText, candidateText) =>
        checkConstraints(mechanical, { incumbentText, candidateText, sectionsOf }),
    },
    corpus,
    partitions,
    fileCorpus,
    corpusAdmission: { admission, leaks },
    task,
    exampleFormat,
    headline: composeHeadline(task),
    executor,
    proposer,
    ...settings,
  };
}
