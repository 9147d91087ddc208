/**
 * The study configuration: `kloop.yaml` in the study folder.
 *
 * Read with a strict schema: an unknown key, a wrong type or a value out of
 * range is an {@link InputError} naming the file, the line and the field
 * (`kloop.yaml:14: gate.alpah: unknown key "alpah" (allowed: ...)`). A
 * configured 0 means 0: defaults fill only keys that are absent.
 *
 * Paths (`artifact`, `program`, `corpus`) are relative to the study folder
 * and returned absolute; corpus globs (`*`, `?`, `[...]`, `{a,b}`, `**`, with
 * fast-glob) are also
 * expanded into `corpusFiles`.
 *
 * `task` is a kind (`intent`, the default; kept for old studies) or an
 * object whose `kind` says which task and whose other keys are its settings
 * (classification labels, extraction fields, a custom scorer module). The
 * task is built from it in `src/study/compose.ts`, where its settings and the
 * `weights` (keyed by the task's component names) are checked, with the
 * line of the offending key.
 *
 * @example
 * ```yaml
 * task: intent
 * executor: { kind: offline }
 * artifact: playbook.yaml
 * corpus: [corpus/*.yaml, corpus/*.jsonl]
 * gate: { alpha: 0.05, repeats: 1 }
 * stopping: { maxExperiments: 30, plateauRounds: 2 }
 * seed: 7
 * providers: { openai: { maxInFlight: 4 } }   # requests in flight per provider (default 8)
 * ```
 *
 * `kloop config <study>` prints every effective value with its source
 * (`src/report/effective-config.ts`, docs/config.md).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.ts';
import { fieldName, parseLocatedYaml, parseWithSchema, type LocatedYaml } from '../program/yaml-locations.ts';
import { signalsConfigSchema } from './signals-config.ts';
import { expandGlob, hasGlob } from './corpus-glob.ts';

export { expandGlob } from './corpus-glob.ts';
import { executorSchema } from './executor-schema.ts';
import { gateSchema } from './gate-schema.ts';
import { proposerSchema } from './proposer-schema.ts';
import { providersSchema } from './providers-schema.ts';
import { scheduleSchema } from './schedule-schema.ts';
import { corpusPolicySchema, stoppingSchema } from './stopping-schema.ts';
import { notebookSchema, storageSchema } from './storage-schema.ts';
import { taskSchema, weightsSchema } from './task-schema.ts';
import { DEFAULT_SEED } from './study-defaults.ts';

export type { ExecutorKind } from './executor-schema.ts';
export {
  DEFAULT_COMMAND_CONCURRENCY,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_LLM_MAX_OUTPUT_TOKENS,
  DEFAULT_LLM_TIMEOUT_MS,
  EXECUTOR_KINDS,
} from './executor-schema.ts';
export { DEFAULT_FUTILITY_LEVEL, DEFAULT_RACING_BATCH_SIZE, racingSettingsOf, withRacing } from './gate-schema.ts';
export { PROPOSER_KINDS } from './proposer-schema.ts';
export { DEFAULT_MAX_IN_FLIGHT } from './providers-schema.ts';
export { cronExpression, DEFAULT_FAST_CADENCE, DEFAULT_SLOW_CADENCE, timeZoneSchema } from './schedule-schema.ts';
export type { TaskKind } from './task-schema.ts';
export { TASK_KINDS } from './task-schema.ts';

/** Name of the configuration file inside a study folder. */
export const CONFIG_FILE_NAME = 'kloop.yaml';

/** Extensions a corpus file may have. */
export const CORPUS_EXTENSIONS = ['.yaml', '.yml', '.jsonl'] as const;

const relativePath = z.string().trim().min(1);
const corpusPattern = relativePath.refine(
  (pattern) => CORPUS_EXTENSIONS.some((extension) => pattern.toLowerCase().endsWith(extension)),
  `a corpus file must end in ${CORPUS_EXTENSIONS.join(', ')}`,
);

/** The schema of `kloop.yaml` (strict objects: unknown keys are errors). */
export const studyConfigSchema = z
  .strictObject({
    /** The task: a kind or `{ kind, ...settings }`. Default `intent`. */
    task: taskSchema.default('intent'),
    executor: executorSchema.prefault({}),
    /** Artifact file, relative to the study. Required. */
    artifact: relativePath,
    /** Program file, relative to the study. Default `program.md`. */
    program: relativePath.default('program.md'),
    /** Corpus files or globs relative to the study (.yaml, .yml, .jsonl). Required. */
    corpus: z.union([
      corpusPattern.transform((pattern) => [pattern]),
      z.array(corpusPattern).min(1, 'list at least one corpus file'),
    ]),
    proposer: proposerSchema.prefault({}),
    gate: gateSchema.prefault({}),
    stopping: stoppingSchema.prefault({}),
    /** Seed of every random choice. Default 1. */
    seed: z.int().min(0).default(DEFAULT_SEED),
    corpusPolicy: corpusPolicySchema.prefault({}),
    /** Composite weights by component name; only ratios matter. Default the task's (intent: 0.25 / 0.35 / 0.20 / 0.20). */
    weights: weightsSchema.optional(),
    /** Two-speed schedule of `kloop schedule`. */
    schedule: scheduleSchema.prefault({}),
    /** Production signals (Loop D) and pattern mining (Loop C); see src/config/signals-config.ts. */
    signals: signalsConfigSchema.prefault({}),
    /** The lab notebook: `notebook.git: true` mirrors it as git commits. */
    notebook: notebookSchema.prefault({}),
    /** Settings per model provider: `providers: { openai: { maxInFlight: 4 } }`. */
    providers: providersSchema.prefault({}),
    /**
     * Where the notebook is kept: a `postgres://` URL (one study per schema:
     * `?schema=NAME`, default `public`); absent, the SQLite file
     * `.kloop/kloop.db`. `--db <url>` overrides it. See docs/storage.md.
     */
    storage: storageSchema.optional(),
  })
  .superRefine((config, context) => {
    if (
      config.proposer.kind === 'reflective' &&
      config.proposer.model === undefined &&
      config.executor.kind !== 'llm'
    ) {
      context.addIssue({
        code: 'custom',
        path: ['proposer', 'kind'],
        message: 'a reflective proposer needs a model: set proposer.model or use an llm executor',
      });
    }
  });

type ParsedConfig = z.output<typeof studyConfigSchema>;

/** A loaded study configuration: defaults applied, paths absolute. */
export interface StudyConfig
  extends Omit<ParsedConfig, 'artifact' | 'program' | 'corpus' | 'schedule' | 'signals' | 'notebook' | 'providers'> {
  /** Settings per model provider (always set by `loadStudyConfig`; optional for configs built in code). */
  providers?: ParsedConfig['providers'];
  /**
   * The line of each `task` and `weights` key in `kloop.yaml`, by dotted
   * field path (`weights.appType`, `task.labels`), for the errors of the
   * checks made once the task is built. Absent for configs built in code.
   */
  lines?: Readonly<Record<string, number>>;
  /** The lab notebook's git mirror (always set by `loadStudyConfig`; optional for configs built in code). */
  notebook?: ParsedConfig['notebook'];
  /** Two-speed schedule (always set by `loadStudyConfig`; optional for configs built in code). */
  schedule?: ParsedConfig['schedule'];
  /** Signals and pattern mining (always set by `loadStudyConfig`; optional for configs built in code). */
  signals?: ParsedConfig['signals'];
  /** Absolute path of the study folder. */
  dir: string;
  /** Absolute path of `kloop.yaml`. */
  configPath: string;
  /** Absolute path of the artifact file. */
  artifact: string;
  /** Absolute path of `program.md`. */
  program: string;
  /** Corpus files and globs, absolute, in the order written. */
  corpus: string[];
  /** Every corpus file the patterns match: absolute, sorted, each once. */
  corpusFiles: string[];
}

export type ExecutorConfig = StudyConfig['executor'];
export type TaskConfig = StudyConfig['task'];
export type ProposerConfig = StudyConfig['proposer'];
export type GateConfig = StudyConfig['gate'];
export type StoppingConfig = StudyConfig['stopping'];
export type CorpusPolicyConfig = StudyConfig['corpusPolicy'];
export type ScheduleConfig = ParsedConfig['schedule'];

/**
 * Reads and validates `<studyDir>/kloop.yaml` (UTF-8).
 *
 * @param studyDir the study folder, absolute or relative to the working directory
 * @throws InputError when `kloop.yaml` is missing (naming it), is malformed
 *   YAML (with the line), has an unknown key (naming the key and its line) or
 *   a wrong value (file, line, field); when the artifact or program file does
 *   not exist; when a corpus file listed by name does not exist, a corpus
 *   pattern matches no file (naming the pattern), or a folder it must read
 *   cannot be read
 */
export function loadStudyConfig(studyDir: string): StudyConfig {
  const dir = path.resolve(studyDir);
  const configPath = path.join(dir, CONFIG_FILE_NAME);
  const file = path.join(studyDir, CONFIG_FILE_NAME);
  const located = parseLocatedYaml(readConfigText(configPath, file, dir), { file });
  if (located.value === null || located.value === undefined) {
    throw new InputError('the file is empty; it needs at least `artifact` and `corpus`', {
      file,
      line: 1,
      studyPath: dir,
      code: 'input.config',
    });
  }
  const parsed = parseWithSchema(studyConfigSchema, withoutOfflineMode(located, file), { file });
  refuseInapplicableKeys(parsed, located, file);

  const artifact = path.resolve(dir, parsed.artifact);
  const program = path.resolve(dir, parsed.program);
  requireFile(artifact, located, ['artifact'], file);
  requireFile(program, located, ['program'], file);
  const corpus = parsed.corpus.map((pattern) => path.resolve(dir, pattern));
  return {
    ...parsed,
    lines: keyLines(located),
    dir,
    configPath,
    artifact,
    program,
    corpus,
    corpusFiles: corpusFilesOf(corpus, parsed.corpus, { located, file, dir }),
  };
}

/**
 * The text of `kloop.yaml` (UTF-8, without a byte-order mark).
 *
 * @throws InputError when it is missing (naming it) or cannot be read
 */
function readConfigText(configPath: string, file: string, dir: string): string {
  try {
    return readFileSync(configPath, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new InputError(
      missing
        ? `file not found: a study folder needs a ${CONFIG_FILE_NAME}`
        : `cannot read: ${(error as Error).message}`,
      {
        file,
        studyPath: dir,
        code: 'input.config',
        cause: error,
      },
    );
  }
}

/**
 * Every corpus file the patterns match: absolute, sorted, each once.
 *
 * @param corpus the patterns, absolute
 * @param written the patterns as written in `kloop.yaml` (for the messages)
 * @throws InputError when a file listed by name does not exist, a pattern
 *   matches no file, or a folder it must read cannot be read
 */
function corpusFilesOf(
  corpus: readonly string[],
  written: readonly string[],
  where: { located: LocatedYaml; file: string; dir: string },
): string[] {
  const { located, file, dir } = where;
  const corpusFiles = new Set<string>();
  const rawCorpus = (located.value as Record<string, unknown>).corpus;
  corpus.forEach((pattern, index) => {
    const corpusPath: PropertyKey[] = Array.isArray(rawCorpus) ? ['corpus', index] : ['corpus'];
    const at = { file, line: located.lineOf(corpusPath), field: fieldName(corpusPath), studyPath: dir };
    if (!hasGlob(pattern)) requireFile(pattern, located, corpusPath, file);
    let matches: string[];
    try {
      matches = expandGlob(pattern);
    } catch (error) {
      const failure = error as NodeJS.ErrnoException;
      throw new InputError(
        `cannot read ${failure.path ?? 'a folder'} while expanding "${written[index]}" (${failure.code ?? failure.message})`,
        { ...at, code: 'input.config', cause: error },
      );
    }
    // Every pattern must match: one that matches nothing is a typo or a missing folder, never silently nothing.
    if (matches.length === 0) {
      throw new InputError(`the corpus pattern "${written[index]}" matches no file (looked for ${pattern})`, {
        ...at,
        code: 'input.config',
      });
    }
    for (const match of matches) corpusFiles.add(match);
  });
  return [...corpusFiles].sort();
}

/**
 * The document without its `mode: offline` key (the default mode, written or
 * not); a `mode: online` study is read by src/online/config.ts instead.
 *
 * @throws InputError naming the line of `mode` when it is not `offline`
 */
function withoutOfflineMode(located: LocatedYaml, file: string): LocatedYaml {
  const value = located.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, 'mode'))
    return located;
  const { mode, ...rest } = value as Record<string, unknown>;
  if (mode !== 'offline') {
    const message =
      mode === 'online'
        ? 'this is an online study (mode: online): this command works on offline studies only; `kloop run` and `kloop show` read online studies'
        : `mode must be offline or online (got ${JSON.stringify(mode)})`;
    throw new InputError(message, { file, line: located.lineOf(['mode']), field: 'mode', code: 'input.config' });
  }
  return { ...located, value: rest };
}

/**
 * Refuses the keys written in `kloop.yaml` that would do nothing for this
 * study (a key that is accepted is honoured): for a task other than intent,
 * `corpusPolicy.partialGold` (a rule of intent gold) and the cadences of the
 * slow loops A, C and D (`schedule.slow`, `schedule.loops.A|C|D` other than
 * `off`), which work on intent studies only. The checks on `executor` and
 * `proposer` keys are in their schemas.
 *
 * @throws InputError naming the key and its line
 */
function refuseInapplicableKeys(parsed: ParsedConfig, located: LocatedYaml, file: string): void {
  const kind = typeof parsed.task === 'string' ? parsed.task : parsed.task.kind;
  if (kind === 'intent') return;
  const written = (path: string[]): unknown =>
    path.reduce<unknown>(
      (value, key) =>
        value !== null && typeof value === 'object' && Object.hasOwn(value, key)
          ? (value as Record<string, unknown>)[key]
          : undefined,
      located.value,
    );
  const refuse = (path: string[], message: string): never => {
    throw new InputError(message, { file, line: located.lineOf(path), field: fieldName(path), code: 'input.config' });
  };
  if (written(['corpusPolicy', 'partialGold']) !== undefined) {
    refuse(
      ['corpusPolicy', 'partialGold'],
      `partialGold applies to intent studies only (it admits intent gold without an app type); this study's task is ${kind}`,
    );
  }
  const slowOnly = `Loops A, C and D work on intent studies only; this study's task is ${kind}, so \`kloop schedule\` skips them`;
  if (written(['schedule', 'slow']) !== undefined)
    refuse(['schedule', 'slow'], `slow is the cadence of Loops A, C and D: ${slowOnly}`);
  for (const loop of ['A', 'C', 'D']) {
    const cadence = written(['schedule', 'loops', loop]);
    if (cadence !== undefined && cadence !== 'off')
      refuse(['schedule', 'loops', loop], `${slowOnly} (write "off", or leave the key out)`);
  }
}

/** The line of every key under `task` and `weights` (and of the two keys themselves), by dotted path. */
function keyLines(located: LocatedYaml): Record<string, number> {
  const lines: Record<string, number> = {};
  const root = located.value as Record<string, unknown>;
  const walk = (value: unknown, path: PropertyKey[]): void => {
    lines[fieldName(path)] = located.lineOf(path);
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, [...path, index]));
    else for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key]);
  };
  for (const key of ['task', 'weights']) if (Object.hasOwn(root, key)) walk(root[key], [key]);
  return lines;
}

function requireFile(filePath: string, located: LocatedYaml, fieldPath: PropertyKey[], file: string): void {
  if (existsSync(filePath) && statSync(filePath).isFile()) return;
  throw new InputError(`file not found: ${filePath}`, {
    file,
    line: located.lineOf(fieldPath),
    field: fieldName(fieldPath),
    code: 'input.config',
  });
}
