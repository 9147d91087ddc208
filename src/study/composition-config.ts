/** What study composition (src/study/compose.ts) reads of a config, its checks (weights, executor × proposer × task) and its errors located in kloop.yaml. */
import { InputError } from '../errors.ts';
import { defaultWeights, taskComponents } from '../tasks/task.ts';
import { SCORER_VERSION as INTENT_TASK_ID } from '../tasks/intent/scorer.ts';
import type { Task } from '../tasks/task.ts';
import type { StudyConfig, TaskConfig, TaskKind } from '../config/config.ts';

/** The parts of a config composition reads. */
export type CompositionConfig = Pick<
  StudyConfig,
  'task' | 'corpusPolicy' | 'executor' | 'proposer' | 'dir' | 'configPath' | 'lines' | 'weights' | 'gate'
>;

/** The kind of `task:` (string form or `kind`). */
export function taskKindOf(task: TaskConfig): TaskKind {
  return typeof task === 'string' ? task : task.kind;
}

/** True for the intent task (its scorer id). */
export function isIntentTask(task: Pick<Task, 'id'>): boolean {
  return task.id === INTENT_TASK_ID;
}

/** An InputError about a key of kloop.yaml, with its line when known. */
export function configError(
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
