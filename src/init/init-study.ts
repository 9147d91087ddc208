/**
 * `kloop init`'s work: render a study for a task and an executor, then write
 * it into a folder all at once.
 *
 * - {@link planStudy} renders every file in memory (nothing touches the disk),
 *   so a bad combination fails before anything is written.
 * - {@link writeStudy} writes the files: into a new folder through a
 *   temporary sibling folder renamed into place (the folder appears whole or
 *   not at all); into an existing empty folder, or a non-empty one with
 *   `force`, file by file, each through a temporary file renamed over it.
 *
 * @example
 * ```ts
 * const plan = planStudy({ task: 'classification', executor: 'command' });
 * const written = writeStudy('tickets', plan.files);
 * seedSteps(plan.study, { task: plan.task, executor: plan.executor, dir: 'tickets' });
 * ```
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InputError, StorageError } from '../errors.ts';
import { renderClassification } from './templates/classification.ts';
import {
  INIT_EXECUTORS,
  INIT_TASKS,
  type InitExecutor,
  type InitTask,
  type RenderedStudy,
  type StudyFile,
} from './templates/common.ts';
import { renderCustom } from './templates/custom.ts';
import { renderExtraction } from './templates/extraction.ts';
import { renderIntent } from './templates/intent.ts';

export { INIT_EXECUTORS, INIT_TASKS, type InitExecutor, type InitTask, type RenderedStudy, type StudyFile };

/** Settings of {@link planStudy}. */
export interface InitOptions {
  task: InitTask;
  /** Default: {@link defaultExecutor} of the task. */
  executor?: InitExecutor;
}

/** A rendered study, not yet written. */
export interface StudyPlan {
  task: InitTask;
  executor: InitExecutor;
  /** Every file, paths relative to the study folder, in the order they are listed. */
  files: StudyFile[];
  study: RenderedStudy;
}

/** The executor a task gets when none is asked for: `offline` for intent (no API key), else `llm`. */
export function defaultExecutor(task: InitTask): InitExecutor {
  return task === 'intent' ? 'offline' : 'llm';
}

/**
 * Renders the study of a task and an executor.
 *
 * @throws InputError (field `--task` or `--executor`) for an unknown task or
 *   executor, and for `offline` with a task other than intent (the offline
 *   executor is the intent playbook extractor)
 */
export function planStudy(options: InitOptions): StudyPlan {
  if (!(INIT_TASKS as readonly string[]).includes(options.task)) {
    throw new InputError(`unknown task "${options.task}" (allowed: ${INIT_TASKS.join(', ')})`, { field: '--task' });
  }
  const executor = options.executor ?? defaultExecutor(options.task);
  if (!(INIT_EXECUTORS as readonly string[]).includes(executor)) {
    throw new InputError(`unknown executor "${executor}" (allowed: ${INIT_EXECUTORS.join(', ')})`, {
      field: '--executor',
    });
  }
  if (executor === 'offline' && options.task !== 'intent') {
    throw new InputError(
      `the offline executor is the intent playbook extractor: task ${options.task} takes --executor llm or --executor command`,
      { field: '--executor' },
    );
  }
  const study =
    options.task === 'intent'
      ? renderIntent(executor)
      : options.task === 'classification'
        ? renderClassification(executor)
        : options.task === 'extraction'
          ? renderExtraction(executor)
          : renderCustom(executor);
  return { task: options.task, executor, files: study.files, study };
}

/** What {@link writeStudy} did. */
export interface WrittenStudy {
  /** The study folder, absolute. */
  dir: string;
  /** The files written, relative to `dir`, in plan order. */
  files: string[];
  /** Those of them that replaced a file already there (only with `force`). */
  overwritten: string[];
}

/** Files that are programs (a shebang line) are written executable. */
function modeOf(file: StudyFile): number {
  return file.text.startsWith('#!') ? 0o755 : 0o644;
}

function writeInto(folder: string, file: StudyFile, temporarySuffix?: string): void {
  const target = path.join(folder, ...file.path.split('/'));
  mkdirSync(path.dirname(target), { recursive: true });
  if (temporarySuffix === undefined) {
    writeFileSync(target, file.text, { encoding: 'utf8', mode: modeOf(file) });
    chmodSync(target, modeOf(file));
    return;
  }
  const temporary = `${target}.${temporarySuffix}`;
  try {
    writeFileSync(temporary, file.text, { encoding: 'utf8', mode: modeOf(file) });
    chmodSync(temporary, modeOf(file));
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function storageError(error: unknown, file: string): StorageError {
  return new StorageError(`cannot write the study: ${(error as Error).message}`, { file, cause: error });
}

/**
 * Writes a study's files into `dir` (created with its parents when absent).
 *
 * @param dir the study folder, absolute or relative to the working directory
 * @param files the files of a {@link StudyPlan}
 * @param options `force`: write into a folder that is not empty (files of
 *   the same path are replaced; other files are kept). Default false.
 * @throws InputError (code `input.not_empty`, nothing written) when `dir`
 *   holds anything and `force` is not set; InputError when `dir` is a file
 * @throws StorageError when a file cannot be written (a new folder is then
 *   left absent: its temporary folder is removed)
 */
export function writeStudy(dir: string, files: readonly StudyFile[], options: { force?: boolean } = {}): WrittenStudy {
  const target = path.resolve(dir);
  const suffix = `kloop-init-${process.pid}-${randomBytes(4).toString('hex')}`;
  const written = files.map((file) => file.path);
  if (!existsSync(target)) {
    const parent = path.dirname(target);
    const temporary = path.join(parent, `.${path.basename(target)}.${suffix}`);
    try {
      mkdirSync(parent, { recursive: true });
      mkdirSync(temporary);
      for (const file of files) writeInto(temporary, file);
      renameSync(temporary, target);
    } catch (error) {
      rmSync(temporary, { recursive: true, force: true });
      throw storageError(error, dir);
    }
    return { dir: target, files: written, overwritten: [] };
  }
  if (!statSync(target).isDirectory())
    throw new InputError('exists and is not a folder: give a new folder for the study', { file: dir, field: '<dir>' });
  const present = readdirSync(target);
  if (present.length > 0 && options.force !== true) {
    const shown = present.sort().slice(0, 5).join(', ') + (present.length > 5 ? `, … (${present.length} entries)` : '');
    throw new InputError(
      `the folder is not empty (${shown}): give a new or empty folder, or pass --force to write the study's files into it (files of the same name are replaced, others kept); nothing was written`,
      {
        file: dir,
        field: '<dir>',
        code: 'input.not_empty',
      },
    );
  }
  const overwritten = files
    .filter((file) => existsSync(path.join(target, ...file.path.split('/'))))
    .map((file) => file.path);
  try {
    for (const file of files) writeInto(target, file, suffix);
  } catch (error) {
    throw storageError(error, dir);
  }
  return { dir: target, files: written, overwritten };
}
