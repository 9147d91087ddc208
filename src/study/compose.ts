/**
 * Composition in one place: `kloop.yaml` → the task, its corpus record
 * format and the weights. (Executors and proposers join in later steps.)
 *
 * @module
 */
import { createExampleFormat, type ExampleFormat } from '../corpus/example-format.ts';
import { createIntentTask } from '../tasks/intent/intent-task.ts';
import { SCORER_VERSION as INTENT_TASK_ID } from '../tasks/intent/scorer.ts';
import type { Task } from '../tasks/task.ts';
import { defaultWeights } from '../tasks/task.ts';
import type { StudyConfig } from './config.ts';

/** The task of a study, with its record format. */
export interface ComposedTask {
  task: Task;
  exampleFormat: ExampleFormat;
}

/** Builds the study's task from `task:` (intent: admission as `corpusPolicy.partialGold` says). */
export function composeTask(config: Pick<StudyConfig, 'task' | 'corpusPolicy'>): ComposedTask {
  const task = createIntentTask({ requireAppType: config.corpusPolicy.partialGold !== true });
  return { task, exampleFormat: createExampleFormat(task, 'goal') };
}

/** The study's weights: the task's defaults, replaced by `weights:` where given. */
export function composeWeights(task: Task, configured: Readonly<Record<string, number>> | undefined): Record<string, number> {
  return { ...defaultWeights(task), ...(configured ?? {}) };
}

/**
 * The record format that admits partial gold (`kloop corpus add
 * --partial-gold`): for intent, the intent task without the known-app-type
 * rule; every other task's format is returned unchanged (no such rule).
 */
export function withPartialGold(format: ExampleFormat): ExampleFormat {
  if (format.task.id !== INTENT_TASK_ID || format.inputField !== 'goal') return format;
  return createExampleFormat(createIntentTask({ requireAppType: false }), 'goal');
}
