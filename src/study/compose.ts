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
import { type ClassificationTask, createClassificationTask } from '../tasks/classification/classification-task.ts';
import { loadCustomTask } from '../tasks/custom/custom-task.ts';
import { createExtractionTask, type ExtractionTaskOptions } from '../tasks/extraction/extraction-task.ts';
import { createIntentTask } from '../tasks/intent/intent-task.ts';
import type { Task } from '../tasks/task.ts';
import type { StudyConfig, TaskKind } from '../config/config.ts';
import type { StudyHeadline } from '../loop/loaded-study.ts';
import { configError, isIntentTask, taskKindOf, type CompositionConfig } from './composition-config.ts';

export type { CompositionConfig } from './composition-config.ts';
export { checkComposition, composeWeights, isIntentTask, taskKindOf } from './composition-config.ts';
export type { ExecutorParts, ProposerParts } from './compose-roles.ts';
export {
  composeExecutor,
  composeProposer,
  createLazyErrorDrivenProposer,
  createLazyOfflineExecutor,
} from './compose-roles.ts';
export { composeSectionsOf, topLevelYamlSections, wholeTextSection } from './compose-sections.ts';

/** The task of a study, with its record format. */
export interface ComposedTask {
  task: Task;
  exampleFormat: ExampleFormat;
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
