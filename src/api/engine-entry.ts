/**
 * The package's `runStudy` and `createLoopEngine` (src/index.ts): the
 * engine's own (src/loop/) take the study's notebook (`{ study, notebook:
 * openNotebook(db) }`, src/storage/notebook/index.ts); these also take the
 * database handle as earlier releases did (`{ study, db }`, from
 * `openDatabase`), so library code written for them keeps working. Exactly
 * one of `db` and `notebook` is given; both or neither is an {@link InputError}.
 *
 * @module
 */
import { InputError } from '../errors.ts';
import type { LoopEngine } from '../loop/engine.ts';
import { createLoopEngine as createEngine } from '../loop/engine.ts';
import type { RunOptions, RunOutcome } from '../loop/run-study.ts';
import { runStudy as runEngine } from '../loop/run-study.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/** The engine's options, with the notebook given as itself or as the database handle it is opened on. */
export type EngineEntryOptions =
  | RunOptions
  | (Omit<RunOptions, 'notebook'> & { notebook?: undefined; db: StudyDatabase });

/** The options with the notebook bound: `db` becomes `openNotebook(db)`. */
function withNotebook(options: EngineEntryOptions): RunOptions {
  const { db, ...rest } = options as Omit<RunOptions, 'notebook'> & {
    db?: StudyDatabase;
    notebook?: RunOptions['notebook'];
  };
  if ((db === undefined) === (rest.notebook === undefined))
    throw new InputError(
      'runStudy/createLoopEngine: give the study database as exactly one of `db` (from openDatabase) and `notebook` (openNotebook(db))',
    );
  return { ...rest, notebook: rest.notebook ?? openNotebook(db!) } as RunOptions;
}

/** Runs the study until a stopping criterion holds (src/loop/run-study.ts), on `notebook` or `db`. */
export async function runStudy(options: EngineEntryOptions): Promise<RunOutcome> {
  return runEngine(withNotebook(options));
}

/** The loop engine, one step at a time (src/loop/engine.ts), on `notebook` or `db`. */
export async function createLoopEngine(options: EngineEntryOptions): Promise<LoopEngine> {
  return createEngine(withNotebook(options));
}
