/**
 * Composition in one place: `kloop.yaml` → the task, its corpus record
 * format, the weights, the executor, the proposer and the artifact's
 * sections. Everything above the engine that knows a concrete task, executor
 * or proposer is here; the loop, the evaluator, the gate, storage and the
 * reports know them only through their contracts (`src/tasks/task.ts`,
 * `src/executors/executor.ts`, `src/proposers/proposer.ts`).
 *
 * What goes with what (checked by {@link checkComposition}, with the line of
 * the offending key):
 *
 * | executor.kind   | task                  | error-driven proposer              |
 * |-----------------|-----------------------|------------------------------------|
 * | `offline`       | intent only           | the TBL playbook proposer          |
 * | `routing-rules` | classification only   | the keyword-rules proposer         |
 * | `llm`           | any                   | — (use `reflective`)               |
 * | `command`       | any                   | — (use `reflective`)               |
 *
 * The reflective proposer works with any task and any text artifact.
 *
 * Implementations: `routing-rules` → `createRoutingRulesExecutor()`
 * (src/executors/routing-rules/), `command` → `createCommandExecutor({ command,
 * cwd, timeoutMs, concurrency })` (src/executors/command/), `llm` →
 * `createLlmExecutor({ client, task, deterministic })` (src/executors/llm/;
 * for intent its own request layout), the keyword-rules proposer
 * (src/proposers/keyword-rules/) for `error-driven` + `routing-rules`.
 *
 * @module
 */
import { createExampleFormat, type ExampleFormat } from '../corpus/example-format.ts';
import { InputError, isKloopError } from '../errors.ts';
import { createCommandExecutor } from '../executors/command/command-executor.ts';
import type { Executor } from '../executors/executor.ts';
import { createLlmExecutor } from '../executors/llm/llm-executor.ts';
import { createRoutingRulesExecutor } from '../executors/routing-rules/routing-rules-executor.ts';
import { createKeywordRulesProposer } from '../proposers/keyword-rules/keyword-rules-proposer.ts';
import type { ErrorDrivenProposerOptions } from '../proposers/error-driven-proposer.ts';
import type { Proposer } from '../proposers/proposer.ts';
import { createReflectiveProposer } from '../proposers/reflective-proposer.ts';
import { createSearchProposer } from '../proposers/search/search-proposer.ts';
import type { LlmClient } from '../providers/llm-client.ts';
import { type ClassificationTask, createClassificationTask } from '../tasks/classification/classification-task.ts';
import { loadCustomTask } from '../tasks/custom/custom-task.ts';
import { createExtractionTask, type ExtractionTaskOptions } from '../tasks/extraction/extraction-task.ts';
import { createIntentTask } from '../tasks/intent/intent-task.ts';
import { createLlmIntentExecutor } from '../tasks/intent/llm/llm-executor.ts';
import path from 'node:path';
import { markdownSections, PREAMBLE_SECTION } from '../artifact/markdown-sections.ts';
import { ERROR_DRIVEN_PROPOSER_ID, OFFLINE_EXECUTOR_ID } from '../tasks/intent/offline/ids.ts';
import { playbookSections } from '../tasks/intent/offline/playbook.ts';
import { SCORER_VERSION as INTENT_TASK_ID } from '../tasks/intent/scorer.ts';
import type { Task } from '../tasks/task.ts';
import { defaultWeights, taskComponents } from '../tasks/task.ts';
import type { StudyConfig, TaskConfig, TaskKind } from '../config/config.ts';
import type { StudyHeadline } from '../loop/loaded-study.ts';
import { DEFAULT_COMMAND_CONCURRENCY, DEFAULT_COMMAND_TIMEOUT_MS } from '../config/config.ts';

/** The parts of a config composition reads. */
export type CompositionConfig = Pick<
  StudyConfig,
  'task' | 'corpusPolicy' | 'executor' | 'proposer' | 'dir' | 'configPath' | 'lines' | 'weights' | 'gate'
>;

/** The task of a study, with its record format. */
export interface ComposedTask {
  task: Task;
  exampleFormat: ExampleFormat;
}

/** The kind of `task:` (string form or `kind`). */
export function taskKindOf(task: TaskConfig): TaskKind {
  return typeof task === 'string' ? task : task.kind;
}

/** True for the intent task (its scorer id). */
export function isIntentTask(task: Pick<Task, 'id'>): boolean {
  return task.id === INTENT_TASK_ID;
}

/** An InputError about a key of kloop.yaml, with its line when known. */
function configError(
  config: { configPath?: string | undefined; lines?: StudyConfig['lines'] },
  field: string,
  message: string,
  code = 'input.config',
): InputError {
  const line = config.lines?.[field] ?? config.lines?.[field.split(/[.[]/)[0]!];
  // Without a kloop.yaml (a study built in code) the error names the field alone.
  if (config.configPath === undefined) return new InputError(message, { field });
  return new InputError(message, { file: config.configPath, field, code, ...(line !== undefined ? { line } : {}) });
}

/** Re-throws a task factory's InputError (field relative to the task's settings) located under `task` in kloop.yaml. */
function locatedTask<T>(config: CompositionConfig, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!isKloopError(error) || error.code.startsWith('input') === false) throw error;
    const inner = (error.field ?? '').replace(/\.(\d+)(?=\.|$)/g, '[$1]');
    throw configError(config, inner === '' || inner === 'task' ? 'task' : `task.${inner}`, error.detail);
  }
}

function formatOf(task: Task, kind: TaskKind): ComposedTask {
  return { task, exampleFormat: createExampleFormat(task, kind === 'intent' ? 'goal' : 'input') };
}

/**
 * Builds the study's built-in task from `task:` (synchronously): intent (its
 * admission as `corpusPolicy.partialGold` says), classification, extraction.
 *
 * @throws InputError (kloop.yaml, the line of the key) on bad task settings,
 *   and for a custom task, which is loaded asynchronously ({@link composeTaskAsync})
 */
export function composeTask(
  config: Pick<CompositionConfig, 'task' | 'corpusPolicy' | 'configPath' | 'lines'> & Partial<CompositionConfig>,
): ComposedTask {
  const spec = config.task;
  const kind = taskKindOf(spec);
  const full = config as CompositionConfig;
  switch (kind) {
    case 'intent':
      return formatOf(createIntentTask({ requireAppType: config.corpusPolicy.partialGold !== true }), kind);
    case 'classification': {
      if (typeof spec === 'string' || spec.kind !== 'classification')
        throw configError(
          config,
          'task',
          'a classification task needs its labels: task: { kind: classification, labels: [billing, technical, ...] }',
        );
      return formatOf(
        locatedTask(full, () =>
          createClassificationTask({
            labels: spec.labels,
            ...(spec.reportAs !== undefined ? { reportAs: spec.reportAs } : {}),
            ...(spec.fieldOrder !== undefined ? { fieldOrder: spec.fieldOrder } : {}),
          }),
        ),
        kind,
      );
    }
    case 'extraction': {
      if (typeof spec === 'string' || spec.kind !== 'extraction')
        throw configError(
          config,
          'task',
          'an extraction task needs its fields: task: { kind: extraction, fields: { total: { match: number } } }',
        );
      return formatOf(
        locatedTask(full, () =>
          createExtractionTask({
            fields: spec.fields as ExtractionTaskOptions['fields'],
            ...(spec.fieldOrder !== undefined ? { fieldOrder: spec.fieldOrder } : {}),
          }),
        ),
        kind,
      );
    }
    case 'custom':
      if (typeof spec === 'string' || spec.kind !== 'custom')
        throw configError(
          config,
          'task',
          'a custom task needs its scorer module: task: { kind: custom, module: score.ts }',
        );
      throw configError(
        config,
        'task',
        'a custom task loads its scorer module asynchronously: load the study with loadStudyAsync (the CLI does)',
        'input.task',
      );
  }
}

/**
 * Builds the study's task from `task:`, a custom scorer module included
 * (loaded from the study folder, `src/tasks/custom/`).
 *
 * @throws InputError as {@link composeTask}; for a custom task, the module's errors (code `custom_module`, naming the file)
 */
export async function composeTaskAsync(
  config: Pick<CompositionConfig, 'task' | 'corpusPolicy' | 'configPath' | 'lines' | 'dir'>,
): Promise<ComposedTask> {
  const spec = config.task;
  if (typeof spec !== 'string' && spec.kind === 'custom')
    return formatOf(await loadCustomTask({ studyFolder: config.dir, module: spec.module }), 'custom');
  return composeTask(config);
}

/**
 * The study's weights: the task's defaults, replaced by `weights:` where
 * given.
 *
 * @throws InputError (kloop.yaml, the key's line) when a name is not one of
 *   the task's components, or when no weight is above 0
 */
export function composeWeights(
  task: Task,
  config: { weights?: StudyConfig['weights']; configPath?: string | undefined; lines?: StudyConfig['lines'] },
): Record<string, number> {
  const names = taskComponents(task).map((component) => component.name);
  for (const name of Object.keys(config.weights ?? {})) {
    if (!names.includes(name)) {
      throw configError(
        config,
        `weights.${name}`,
        `unknown component "${name}": the ${task.id} task's components are ${names.join(', ')}`,
      );
    }
  }
  const weights = { ...defaultWeights(task), ...(config.weights ?? {}) };
  if (!Object.values(weights).some((weight) => weight > 0))
    throw configError(config, 'weights', 'at least one weight must be above 0');
  return weights;
}

/**
 * Checks that the executor, the proposer and the task go together (see the
 * module comment). Called before any file of the study is read.
 *
 * @throws InputError naming `executor.kind` or `proposer.kind` and its line
 */
export function checkComposition(config: CompositionConfig, task: Task): void {
  const intent = isIntentTask(task);
  const kind = taskKindOf(config.task);
  const executor = config.executor.kind;
  if (executor === 'offline' && !intent) {
    throw configError(
      config,
      'executor.kind',
      `the offline executor runs the intent playbook: it needs task intent (this study's task is ${kind}); use executor.kind: routing-rules, llm or command`,
    );
  }
  if (executor === 'routing-rules' && kind !== 'classification') {
    throw configError(
      config,
      'executor.kind',
      `the routing-rules executor answers a label: it needs a classification task (this study's task is ${kind})`,
    );
  }
  const rulesProgram = executor === 'command' && (kind === 'classification' || kind === 'custom');
  if (
    config.proposer.kind === 'error-driven' &&
    !(executor === 'offline' && intent) &&
    !(executor === 'routing-rules' && kind === 'classification') &&
    !rulesProgram
  ) {
    throw configError(
      config,
      'proposer.kind',
      `the error-driven proposer edits an intent playbook (executor offline) or routing rules (executor routing-rules, or a command whose artifact is a routing-rules file); with executor.kind: ${executor} and task ${kind} use proposer.kind: reflective`,
    );
  }
}

/** The offline executor, its module (with the NLP library, about 0.3 s) loaded on the first execution. */
export function createLazyOfflineExecutor(): Executor {
  let loaded: Promise<Executor> | undefined;
  const load = (): Promise<Executor> =>
    (loaded ??= import('../tasks/intent/offline/offline-executor.ts').then((module) => module.createOfflineExecutor()));
  return { id: OFFLINE_EXECUTOR_ID, deterministic: true, execute: async (request) => (await load()).execute(request) };
}

/** The error-driven (TBL) playbook proposer, its module loaded on the first proposal. */
export function createLazyErrorDrivenProposer(options: ErrorDrivenProposerOptions = {}): Proposer {
  let loaded: Promise<Proposer> | undefined;
  const load = (): Promise<Proposer> =>
    (loaded ??= import('../proposers/error-driven-proposer.ts').then((module) =>
      module.createErrorDrivenProposer(options),
    ));
  return { id: ERROR_DRIVEN_PROPOSER_ID, propose: async (context) => (await load()).propose(context) };
}

/** What the executor may need beyond the config: the model client of an `llm` executor. */
export interface ExecutorParts {
  /** The executor's model client (src/providers); required by `llm`. */
  llmClient?: LlmClient;
  /** `--deterministic`: the model answers identically at temperature 0. Default false. */
  deterministic?: boolean;
}

/**
 * Builds the study's executor from `executor:` (see the module comment).
 *
 * @throws InputError for an `llm` executor without a model client ("needs a
 *   model provider"), and for the kinds not wired yet
 */
export function composeExecutor(config: CompositionConfig, task: Task, parts: ExecutorParts = {}): Executor {
  const settings = config.executor;
  switch (settings.kind) {
    case 'offline':
      return createLazyOfflineExecutor();
    case 'routing-rules':
      return createRoutingRulesExecutor();
    case 'command': {
      const options = {
        command: settings.command ?? [],
        cwd: config.dir,
        timeoutMs: settings.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
        concurrency: settings.concurrency ?? DEFAULT_COMMAND_CONCURRENCY,
        deterministic: settings.deterministic === true,
      };
      return createCommandExecutor(options);
    }
    case 'llm': {
      if (parts.llmClient === undefined)
        return throwing(configError(config, 'executor.kind', 'executor kind "llm" needs a model provider'));
      if (isIntentTask(task))
        return createLlmIntentExecutor({
          client: parts.llmClient,
          ...(parts.deterministic !== undefined ? { deterministic: parts.deterministic } : {}),
        });
      return createLlmExecutor({ client: parts.llmClient, task, deterministic: parts.deterministic === true });
    }
  }
}

function throwing(error: Error): never {
  throw error;
}

/** What the proposer may need beyond the config: the model client of a `reflective` proposer. */
export interface ProposerParts {
  /** The proposer's model client (src/providers); required by `reflective`. */
  proposerClient?: LlmClient;
}

/**
 * Builds the study's proposer from `proposer:` (see the module comment).
 *
 * @throws InputError for a `reflective` proposer without a model client
 *   ("needs a model provider"), and for the error-driven keyword-rules proposer until it is wired
 */
export function composeProposer(
  config: CompositionConfig & { artifact?: string },
  task: Task,
  parts: ProposerParts = {},
): Proposer {
  const settings = config.proposer;
  if (settings.kind === 'search') return composeSearchProposer(config);
  if (settings.kind === 'reflective') {
    if (parts.proposerClient === undefined)
      throw configError(config, 'proposer.kind', 'proposer kind "reflective" needs a model provider');
    // A program's JSON or YAML artifact is edited by its top-level keys' values (src/proposers/data-edits.ts); a prompt by its ## sections.
    const dataFile =
      config.executor.kind !== 'offline' && config.executor.kind !== 'llm' && config.artifact !== undefined;
    return createReflectiveProposer({
      client: parts.proposerClient,
      ...(dataFile ? { artifactFile: path.basename(config.artifact!) } : {}),
    });
  }
  checkComposition(config, task);
  // A command program's artifact, for a classification or custom task, is read as a routing-rules file
  // (kloop init writes one); the proposer reports a failed answer when it is not one.
  if (config.executor.kind === 'routing-rules' || config.executor.kind === 'command') {
    return createKeywordRulesProposer({
      ...(settings.maxEvaluations !== undefined ? { maxEvaluations: settings.maxEvaluations } : {}),
      ...(settings.maxScreened !== undefined ? { maxScreened: settings.maxScreened } : {}),
      // The gate skips a delta this close to one tried before; the proposer does not spend a slot on one.
      minDeltaDistance: config.gate.minDeltaDistance,
      // Only the routing-rules executor reads a `scores` section (format 2); a command program may not.
      learnScores: config.executor.kind === 'routing-rules',
      ...(config.artifact !== undefined ? { artifactFile: path.basename(config.artifact) } : {}),
    });
  }
  return createLazyErrorDrivenProposer({
    ...(settings.maxEvaluations !== undefined ? { maxEvaluations: settings.maxEvaluations } : {}),
    ...(settings.maxScreened !== undefined ? { maxScreened: settings.maxScreened } : {}),
    weights: composeWeights(task, config),
  });
}

/**
 * The search proposer (src/proposers/search/): its space, sampler settings
 * and the gate's `minDeltaDistance` from `proposer:`.
 *
 * @throws InputError naming `proposer.kind` when the artifact is not a YAML or JSON file
 */
function composeSearchProposer(config: CompositionConfig & { artifact?: string }): Proposer {
  const settings = config.proposer;
  const artifactFile = config.artifact ?? '';
  if (!DATA_EXTENSIONS.has(path.extname(artifactFile).toLowerCase())) {
    throw configError(
      config,
      'proposer.kind',
      `the search proposer sets parameters in a YAML or JSON artifact (.yaml, .yml, .json); this study's artifact is ${path.basename(artifactFile) || 'not named'}`,
    );
  }
  return createSearchProposer({
    space: settings.space ?? {},
    artifactFile: path.basename(artifactFile),
    sampler: {
      ...(settings.startupTrials !== undefined ? { startupTrials: settings.startupTrials } : {}),
      ...(settings.gamma !== undefined ? { gamma: settings.gamma } : {}),
      ...(settings.tpe !== undefined ? { tpe: settings.tpe } : {}),
    },
    minDeltaDistance: config.gate.minDeltaDistance,
  });
}

/** Extensions of a `command` artifact read as YAML or JSON (top-level keys are its sections). */
const DATA_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
/** Extensions of a `command` artifact read as markdown (`##` headings are its sections). */
const MARKDOWN_EXTENSIONS = new Set(['.md', '.markdown']);

/**
 * How the study's artifact is split into named sections (program.md's
 * `editableSections`):
 *
 * | executor | sections |
 * |---|---|
 * | `offline` | the playbook's top-level sections |
 * | `routing-rules` | the rules file's top-level keys ({@link topLevelYamlSections}) |
 * | `command` | by the artifact's extension: `.yaml`, `.yml`, `.json` its top-level keys; `.md`, `.markdown` its `##` sections; any other file (a plain text, a script) is one section, `(preamble)`, the whole text ({@link wholeTextSection}) |
 * | `llm` | the prompt's markdown `##` sections |
 *
 * A plain text is never read as YAML: a line such as `Note: refunds go to
 * billing` is text, not a section.
 *
 * @throws Error (from the returned function) when the artifact cannot be split
 */
export function composeSectionsOf(
  config: Pick<StudyConfig, 'executor'> & { artifact?: string },
): (text: string) => Record<string, string> {
  if (config.executor.kind === 'offline') {
    return (text) => {
      const sections = playbookSections(text);
      if (sections === null) throw new Error('the artifact is not a readable playbook');
      return sections;
    };
  }
  if (config.executor.kind === 'routing-rules') return topLevelYamlSections;
  if (config.executor.kind === 'command') {
    const extension = path.extname(config.artifact ?? '').toLowerCase();
    if (DATA_EXTENSIONS.has(extension)) return topLevelYamlSections;
    if (MARKDOWN_EXTENSIONS.has(extension)) return markdownSections;
    return wholeTextSection;
  }
  return markdownSections;
}

/** A text that has no sections: one, `(preamble)` (as the text before the first key or heading of the other formats), the whole text. */
export function wholeTextSection(text: string): Record<string, string> {
  return { [PREAMBLE_SECTION]: text };
}

/**
 * The top-level sections of a YAML (or JSON) file, for a rules artifact:
 * a line starting at column 0 with `key:` opens section `key`, which runs to
 * the next such line; comments and blank lines before the first key are the
 * `(preamble)`. A JSON file (starting with `{`) gives each top-level key's
 * value as stable JSON. Byte-exact for YAML: a section's text is its lines.
 */
export function topLevelYamlSections(text: string): Record<string, string> {
  if (text.trimStart().startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key, JSON.stringify(value)]));
    } catch {
      return { '(preamble)': text };
    }
  }
  const sections: Record<string, string> = {};
  let name = '(preamble)';
  let lines: string[] = [];
  const flush = (): void => {
    if (lines.length > 0 || name !== '(preamble)') sections[name] = lines.join('\n');
  };
  for (const line of text.split('\n')) {
    const key = /^([A-Za-z_][\w-]*)\s*:/.exec(line);
    if (key !== null) {
      flush();
      name = key[1]!;
      lines = [];
    }
    lines.push(line);
  }
  flush();
  return sections;
}

/**
 * The figure a study's reports lead with: `misroute rate` (1 − accuracy) for
 * a classification task with `reportAs: misroute rate`, else the composite.
 */
export function composeHeadline(task: Task): StudyHeadline {
  const reportAs = (task as Partial<ClassificationTask>).reportAs;
  return reportAs === 'misroute rate'
    ? { name: 'misroute rate', complement: true }
    : { name: 'composite', complement: false };
}

/**
 * Refuses a study whose task is not intent, for the parts that only know the
 * intent task: Loop A (`kloop loop-a`, `eval --loop A`), Loops C and D
 * (`kloop signals`), `kloop build`.
 *
 * @param what the command or loop, e.g. `Loop A`
 * @throws InputError (code `input.task`, field `task`, kloop.yaml's line)
 */
export function requireIntentStudy(config: Pick<StudyConfig, 'task' | 'configPath' | 'lines'>, what: string): void {
  const kind = taskKindOf(config.task);
  if (kind === 'intent') return;
  throw configError(
    config,
    'task',
    `${what} works on intent studies only (it builds apps from intents); this study's task is ${kind}`,
    'input.task',
  );
}

/**
 * {@link requireIntentStudy} for a loaded study (or one built in code): its task must be intent.
 *
 * @throws InputError (code `input.task`)
 */
export function requireIntentTask(
  study: { task: Pick<Task, 'id'>; dir: string; config?: Pick<StudyConfig, 'task' | 'configPath' | 'lines'> },
  what: string,
): void {
  if (isIntentTask(study.task)) return;
  if (study.config !== undefined) requireIntentStudy(study.config, what);
  throw new InputError(
    `${what} works on intent studies only (it builds apps from intents); this study's task is ${study.task.id}`,
    { studyPath: study.dir, field: 'task', code: 'input.task' },
  );
}

/** True when the config's task is intent (`kloop schedule` skips Loops A, C and D otherwise). */
export function isIntentStudy(config: Pick<StudyConfig, 'task'>): boolean {
  return taskKindOf(config.task) === 'intent';
}

/**
 * The record format that admits partial gold (`kloop corpus add
 * --partial-gold`): for intent, the intent task without the known-app-type
 * rule; every other task's format is returned unchanged (no such rule).
 */
export function withPartialGold(format: ExampleFormat): ExampleFormat {
  if (!isIntentTask(format.task) || format.inputField !== 'goal') return format;
  return createExampleFormat(createIntentTask({ requireAppType: false }), 'goal');
}
