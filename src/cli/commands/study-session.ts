/**
 * Opening a study for a command: load and validate the folder, then open its
 * database. Bad input fails before the database is touched.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../../errors.ts';
import type { StudyDatabase } from '../../storage/study-database.ts';
import {
  databaseExists,
  isWritable,
  openDatabase,
  studyDatabaseLocation,
  studyDatabasePath,
} from '../../storage/database.ts';
import { createNotebookFolder } from '../../storage/notebook-folder.ts';
import { isPostgresUrl } from '../../storage/location.ts';
import type { UsageTotals } from '../../providers/budget.ts';
import { emptyCallsByStage } from '../../providers/call-stage.ts';
import { loadStudyConfig } from '../../config/config.ts';
import { requireIntentStudy } from '../../study/compose.ts';
import type { StudyConfig } from '../../config/config.ts';
import type { LoadedStudy } from '../../loop/loaded-study.ts';
import type { LoadStudyOptions, StudyPlugins } from '../../study/load-study.ts';
import { loadStudyAsync } from '../../study/load-study.ts';
import { progress } from '../output.ts';
import type { ModelCalls } from '../../study/llm-plugins.ts';

/**
 * The study's plugins (what `loadStudy` builds the executor and proposer with)
 * and what a command asks of the language-model ones (src/study/llm-plugins.ts).
 */
export interface SessionPlugins extends StudyPlugins {
  /** Checks that the cost and token caps cover a few full proposals. @throws InputError (code `input.budget`) */
  checkBudget(study: LoadedStudy): unknown;
  /** Tokens, cost and calls so far. */
  usage(): UsageTotals;
}

export interface StudySession {
  study: LoadedStudy;
  db: StudyDatabase;
  /** False when `db` is read-only (a read-only study, or `readonly`) or in memory (no database yet): store nothing in it. */
  writable: boolean;
  /** The language-model plugins; for an offline study (no model is called) usage is zero and every budget covers it. */
  plugins: SessionPlugins;
  close(): Promise<void>;
}

/** The plugins of a study that calls no language model: loadStudy's defaults (the offline executor, the error-driven proposer, playbook sections). */
const OFFLINE_PLUGINS: SessionPlugins = Object.freeze({
  checkBudget: () => undefined,
  usage: () => ({
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    calls: 0,
    cachedCalls: 0,
    callsByStage: emptyCallsByStage(),
  }),
});

/**
 * True when loading the study needs the language-model providers (the AI SDK,
 * slow to import): an `llm` executor, a `reflective` proposer, or `--model`,
 * `--base-url`, `--proposer-base-url` (which a study that calls no model
 * refuses, with the providers' message). The offline, routing-rules and
 * command executors with the error-driven or the search proposer call no
 * model.
 */
function needsModelProviders(config: StudyConfig, options: ModelOptions): boolean {
  return (
    config.executor.kind === 'llm' ||
    config.proposer.kind === 'reflective' ||
    options.model !== undefined ||
    options.baseUrl !== undefined ||
    options.proposerBaseUrl !== undefined
  );
}

/** Model options shared by the commands that run an executor. */
export interface ModelOptions {
  model?: string;
  baseUrl?: string;
  proposerBaseUrl?: string;
  /** commander's `--no-cache` sets `cache: false`. */
  cache?: boolean;
  maxCostUsd?: number;
  maxTokens?: number;
  deterministic?: boolean;
  quiet?: boolean;
}

/** Adds `--model`, `--base-url`, `--proposer-base-url`, `--no-cache`, `--max-cost-usd`, `--max-tokens`, `--deterministic`. */
export function addModelOptions<T extends import('commander').Command>(command: T): T {
  command
    .option(
      '--model <provider:model>',
      'language model, e.g. openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, openai-compatible:qwen2.5-7b, ollama:llama3.1',
    )
    .option(
      '--base-url <url>',
      "base URL of the model server (OpenAI-compatible servers, Ollama, gateways), for whichever role calls a model: the llm executor, and the reflective proposer when it is on the executor's provider or the only model; replaces executor.baseURL and proposer.baseURL",
    )
    .option(
      '--proposer-base-url <url>',
      "base URL of the reflective proposer's model server alone (replaces proposer.baseURL), when it differs from the executor's",
    )
    .option(
      '--no-cache',
      'read no stored model answer or result: ask again, and replace what is stored with what this run measures',
    )
    .option('--max-cost-usd <usd>', 'stop when the run has cost this much (USD)', parseNumber('--max-cost-usd'))
    .option('--max-tokens <n>', 'stop when the run has used this many tokens', parseNumber('--max-tokens'))
    .option('--deterministic', 'treat the model as deterministic (only at temperature 0)');
  return command;
}

function parseNumber(flag: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < 0)
      throw new InputError(`expected a number ≥ 0, got "${value}"`, { field: flag });
    return parsed;
  };
}

/**
 * Loads the study and opens its database.
 *
 * @param readonly open an existing database read-only (no file created); when
 *   none exists, `db` is an in-memory database with the schema
 * @param partitionLeaks `'report'` loads a study with leaks between partitions
 *   (the corpus commands that show and resolve them); default `'error'`
 * @param modelCalls which models the command may call, so whose API keys it
 *   needs: `all` (default), `executor` or `none` (src/study/llm-plugins.ts)
 */
export async function openStudy(
  studyDir: string,
  options: { readonly?: boolean; preferWritable?: boolean; modelCalls?: ModelCalls } & LoadStudyOptions &
    ModelOptions = {},
): Promise<StudySession> {
  if (!existsSync(studyDir)) throw new InputError('the study folder does not exist', { file: studyDir });
  let db: StudyDatabase | undefined;
  let writable = false;
  let plugins: SessionPlugins = OFFLINE_PLUGINS;
  if (needsModelProviders(loadStudyConfig(studyDir), options)) {
    const { createLlmStudyPlugins } = await import('../../study/llm-plugins.ts');
    plugins = createLlmStudyPlugins({
      ...(options.model !== undefined ? { model: options.model } : {}),
      ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {}),
      ...(options.proposerBaseUrl !== undefined ? { proposerBaseURL: options.proposerBaseUrl } : {}),
      noCache: options.cache === false,
      ...(options.maxCostUsd !== undefined ? { maxCostUsd: options.maxCostUsd } : {}),
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
      deterministic: options.deterministic === true,
      ...(options.modelCalls !== undefined ? { modelCalls: options.modelCalls } : {}),
      // The response cache reads and writes the notebook: only when it is writable.
      getDatabase: () => (writable ? db : undefined),
      log: (message) => progress(`kloop: ${message}`, options.quiet === true),
    });
  }
  const study = await loadStudyAsync(
    studyDir,
    plugins,
    options.partitionLeaks !== undefined ? { partitionLeaks: options.partitionLeaks } : {},
  );
  const file = studyDatabaseLocation(study.dir);
  if (isPostgresUrl(file)) {
    // A PostgreSQL notebook: no file to check; read-only opens are refused writes by the server.
    const readonly = options.readonly === true && options.preferWritable !== true;
    db = readonly
      ? (await databaseExists(file))
        ? await openDatabase(file, { readonly: true })
        : await openDatabase(':memory:')
      : await openDatabase(file);
    writable = !readonly;
  } else if (options.preferWritable === true && isStudyWritable(study.dir)) {
    // Commands that only read but benefit from the store (stored evaluations, the response cache):
    // open it for writing when possible, else read-only, else in memory.
    db = await openWritable(file);
    writable = true;
  } else if (options.readonly === true || options.preferWritable === true) {
    db = existsSync(file) ? await openDatabase(file, { readonly: true }) : await openDatabase(':memory:');
  } else {
    assertStudyWritable(study.dir, 'this command');
    db = await openWritable(file);
    writable = true;
  }
  const opened = db;
  return { study, db: opened, writable, plugins, close: () => opened.destroy() };
}

/** The files and folders a command that writes the study's notebook must be able to write. */
function writeTargets(studyDir: string): { file: string; targets: string[] } {
  const dir = path.resolve(studyDir);
  const file = studyDatabasePath(dir);
  const folder = path.dirname(file);
  return { file, targets: existsSync(file) ? [file, folder] : existsSync(folder) ? [folder] : [dir] };
}

/** True when this process may write the study's notebook (creating it if need be); a PostgreSQL notebook is the server's to refuse. */
export function isStudyWritable(studyDir: string): boolean {
  if (isPostgresUrl(studyDatabaseLocation(path.resolve(studyDir)))) return true;
  return writeTargets(studyDir).targets.every((target) => isWritable(target));
}

/**
 * Refuses a study folder kloop cannot write (exit 2), before anything is
 * written: the database file, its folder, or the study folder that would hold
 * it. `command` names who writes, in the message (default `kloop run`).
 */
export function assertStudyWritable(studyDir: string, command = 'kloop run'): void {
  if (!existsSync(path.resolve(studyDir))) return; // the loader names a missing folder
  if (isPostgresUrl(studyDatabaseLocation(path.resolve(studyDir)))) return; // no file of the folder is written
  const { file, targets } = writeTargets(studyDir);
  for (const target of targets) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      throw new InputError(
        `is read-only (${(error as NodeJS.ErrnoException).code ?? 'not writable'}): ${command} writes the study's lab notebook to ${file}; make it writable, or copy the study to a writable folder`,
        { file: target, code: 'input.read_only' },
      );
    }
  }
}

/** Opens (creating) the study database, with a `.gitignore` that keeps `.kloop/` out of the user's repository. */
async function openWritable(file: string): Promise<StudyDatabase> {
  createNotebookFolder(file);
  return openDatabase(file);
}

/**
 * Refuses a study whose task is not intent, before anything is opened, for
 * the commands that only know intent studies (Loop A, `kloop build`). A
 * missing folder is left to {@link openStudy}, which names it.
 *
 * @throws InputError (code `input.task`, kloop.yaml's `task` line)
 */
export function refuseNonIntentStudy(studyDir: string, what: string): void {
  if (!existsSync(studyDir)) return;
  requireIntentStudy(loadStudyConfig(studyDir), what);
}

/**
 * The config of a study folder for a command that only reads its notebook
 * (`kloop report`, `kloop view`), or null for a folder the library API wrote
 * (`createStudy`: a notebook in `.kloop/`, no kloop.yaml): such a notebook is
 * read with the defaults (no corpus policy, no Loop D signals, no git mirror).
 *
 * @throws InputError the folder does not exist; neither a kloop.yaml nor a notebook is there (the config loader's message); a bad kloop.yaml
 */
/** The headline figure of a study's reports from its kloop.yaml (`task.reportAs: misroute rate` is 1 − the composite); the composite without one. */
export function headlineOfConfig(config: StudyConfig | null): { name: string; complement: boolean } {
  const task = config?.task as { kind?: string; reportAs?: string } | string | undefined;
  return typeof task === 'object' && task.kind === 'classification' && task.reportAs === 'misroute rate'
    ? { name: 'misroute rate', complement: true }
    : { name: 'composite', complement: false };
}

export async function loadConfigOrNotebook(studyDir: string): Promise<{ dir: string; config: StudyConfig | null }> {
  const dir = path.resolve(studyDir);
  if (!existsSync(dir)) throw new InputError('the study folder does not exist', { file: studyDir });
  if (!existsSync(path.join(dir, 'kloop.yaml')) && (await databaseExists(studyDatabaseLocation(dir))))
    return { dir, config: null };
  const config = loadStudyConfig(studyDir);
  return { dir: config.dir, config };
}
