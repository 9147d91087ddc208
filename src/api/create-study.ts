/**
 * The library API: a study for people who bring code rather than YAML.
 *
 * `createStudy` builds the same study the CLI loads from a folder — the same
 * notebook (`<storage>/.kloop/`), evaluator, gate, corpus lifecycle and
 * reports — from values in code: the seed artifact, the labelled examples, a
 * task (or just a `score` function), an `execute` function and a proposer.
 * `kloop history <storage>`, `kloop report`, `kloop view` read what it
 * records.
 *
 * Two ways to drive it:
 *
 * - `await study.optimize()`: the loop of `kloop run`, until a stopping
 *   criterion holds;
 * - the primitives, as Optuna's ask-and-tell interface (Akiba et al. 2019,
 *   "Optuna: A Next-generation Hyperparameter Optimization Framework", KDD):
 *   `const candidates = await study.ask()` proposes (recorded, near-duplicates
 *   skipped), then `await study.tell(candidate)` evaluates one candidate with
 *   the frozen evaluator and lets the gate decide. `tell(candidate, results)`
 *   takes outputs the caller produced for that candidate's artifact itself
 *   (e.g. on other machines); kloop still scores them — a caller never hands
 *   in a score.
 *
 * @example
 * ```js
 * import { createStudy } from 'kloop';
 * const study = await createStudy({
 *   storage: './my-study',
 *   artifact: 'positive words: good, great\n',
 *   examples: [{ id: 'r1', input: 'A great phone', expected: 'positive', partition: 'optimization' }, ...],
 *   score: (output, expected) => ({ score: output === expected ? 1 : 0, reason: `expected ${expected}` }),
 *   outcome: 'binary',
 *   execute: (artifact, input) => classify(artifact, input),
 *   proposer: async ({ incumbentText, incumbentScores }) => [{ text: incumbentText + 'positive words: superb\n', rationale: '...' }],
 * });
 * const result = await study.optimize();
 * await study.close();
 * ```
 *
 * @module
 */
import path from 'node:path';
import { contentHash } from '../artifact/content-hash.ts';
import { createExampleFormat } from '../corpus/example-format.ts';
import { checkConstraints, parseProgram } from '../program/program.ts';
import { checkStudyOptions } from './study-options.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import type { LeaseHeartbeat, LeaseRecord } from '../storage/lease.ts';
import { createNotebookFolder } from '../storage/notebook-folder.ts';
import { acquireLease, startLeaseHeartbeat } from '../storage/lease.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { DEFAULT_PROGRAM, listenerOf, proposerOf, taskOf } from './code-adapters.ts';
import { callerExecutor, createCallerOutputs } from './caller-outputs.ts';
import { createStudyHandle } from './study-handle.ts';
import { checkEditableSections, parseStudyExamples, studySettingsOf } from './study-inputs.ts';
import type { CreateStudyOptions, Study } from './study-types.ts';

export type {
  CreateStudyOptions,
  ExecuteContext,
  ExecuteFunction,
  OptimizeResult,
  ProposedCandidate,
  ProposeFunction,
  ScoreFunction,
  Study,
  StudyBest,
  StudyExample,
} from './study-types.ts';

/**
 * Builds (or reopens) a study from values in code and takes its lease (one
 * writer per study, as `kloop run`).
 *
 * @throws InputError (with the field) for an example that does not fit the
 *   task's schemas, a partition with no example, a bad gate or stopping key, an unknown weight
 *   or weights all 0, `gate.requireCalibration` in force (set, or by default for
 *   `deterministic: false`) without a `calibration`
 * @throws StudyBusyError when another process runs the study
 */
export async function createStudy<Input = unknown, Expected = unknown, Output = unknown>(
  options: CreateStudyOptions<Input, Expected, Output>,
): Promise<Study> {
  checkStudyOptions(options);
  const task = taskOf(options);
  const format = createExampleFormat(task, 'input');
  const { examples, partitions } = parseStudyExamples(options, format);
  const deterministic = options.deterministic ?? true;
  // The same builder as `kloop run`'s (src/study/study-settings.ts): the same defaults.
  const settings = studySettingsOf(options, task, deterministic);
  const program = parseProgram(options.program ?? DEFAULT_PROGRAM, 'program');
  const sectionsOf = options.sectionsOf ?? (() => ({}));
  checkEditableSections(options, program, sectionsOf);
  const outputs = createCallerOutputs(examples, settings.gate.repeats, contentHash(options.artifact));
  outputs.take(outputs.seedHash, options.seedOutputs, 'seedOutputs');

  const dir = path.resolve(options.storage);
  const study: LoadedStudy = {
    dir,
    artifactPath: path.join(dir, '(artifact given in code)'),
    artifactText: options.artifact,
    instructions: program.instructions,
    constraintsText: program.constraints,
    constraints: {
      editableSections: program.mechanical.editableSections ?? [],
      maxArtifactCharacters: program.mechanical.maxArtifactCharacters,
      check: (incumbentText, candidateText) =>
        checkConstraints(program.mechanical, { incumbentText, candidateText, sectionsOf }),
    },
    corpus: examples,
    partitions,
    task,
    exampleFormat: format,
    executor: callerExecutor(options, deterministic, outputs),
    proposer: proposerOf(options.proposer),
    ...settings,
  };
  const { db, lease, heartbeat } = await openStudyNotebook(dir);
  return createStudyHandle({
    study,
    db,
    lease,
    heartbeat,
    outputs,
    settings,
    seedText: options.artifact,
    ...(options.calibration !== undefined ? { calibration: options.calibration } : {}),
    ...(options.onEvent !== undefined ? { onEvent: listenerOf(options.onEvent) } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
}

/**
 * Opens (or creates) the notebook in `<dir>/.kloop/` and takes the study's
 * lease, with its heartbeat.
 *
 * @throws StudyBusyError when another process runs the study (the notebook is closed again)
 */
async function openStudyNotebook(
  dir: string,
): Promise<{ db: StudyDatabase; lease: LeaseRecord; heartbeat: LeaseHeartbeat }> {
  const file = studyDatabasePath(dir);
  createNotebookFolder(file);
  const db: StudyDatabase = await openDatabase(file);
  let lease: LeaseRecord;
  try {
    // The CLI's advice (--wait) means nothing here.
    lease = await acquireLease(db, {
      studyKey: dir,
      busyAdvice: 'close() the study there, or let its run end, then create it again',
    });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { db, lease, heartbeat: startLeaseHeartbeat(db, lease) };
}
