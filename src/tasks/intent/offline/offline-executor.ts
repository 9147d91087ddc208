/**
 * The offline executor: deterministic, LLM-free intent extraction whose
 * behaviour is set entirely by the playbook text in each request (DESIGN.md §2,
 * "The offline default"). The code knows English (via compromise), never a
 * business domain.
 *
 * On the executor contract (src/executors/executor.ts): the request's `text`
 * is the goal (the intent task's text of its input); the output is the intent
 * (`intentSchema`), which the evaluator checks against the task's output schema.
 *
 * Two caches keep evaluation of many candidate playbooks fast: the NLP
 * analysis per goal text (independent of the playbook, `goal-analysis.ts`) and
 * the compiled playbook per playbook text (`playbook-cache.ts`).
 */
import type { ExecutionRequest, ExecutionResult, Executor } from '../../../executors/executor.ts';
import { analyzeGoal } from './goal-analysis.ts';
import { extractIntent } from './extract.ts';
import { formatPlaybookError } from './playbook.ts';
import { loadPlaybook } from './playbook-cache.ts';

export { loadPlaybook } from './playbook-cache.ts';

import { OFFLINE_EXECUTOR_ID } from './ids.ts';

export { OFFLINE_EXECUTOR_ID } from './ids.ts';

/**
 * Creates the offline executor.
 *
 * `execute` never throws: an invalid playbook, an aborted request or an
 * internal failure is returned as `{ ok: false, reason: 'error', message }`.
 * Usage is always zero (no model is called).
 *
 * @example
 * const executor = createOfflineExecutor();
 * const goal = 'Patients book appointments.';
 * const result = await executor.execute({ input: goal, text: goal, artifact: playbookText, repeat: 0 });
 * if (result.ok) console.log((result.output as Intent).appType);
 */
export function createOfflineExecutor(): Executor {
  return {
    id: OFFLINE_EXECUTOR_ID,
    deterministic: true,
    execute(request: ExecutionRequest): Promise<ExecutionResult> {
      return Promise.resolve(executeSync(request));
    },
  };
}

const ZERO_USAGE = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

function executeSync(request: ExecutionRequest): ExecutionResult {
  const started = performance.now();
  try {
    if (request.signal?.aborted === true) return { ok: false, reason: 'error', message: 'aborted before execution' };
    const loaded = loadPlaybook(request.artifact);
    if (!loaded.ok) {
      const shown = loaded.errors.slice(0, 5).map(formatPlaybookError).join('; ');
      const more = loaded.errors.length > 5 ? ` (+${loaded.errors.length - 5} more)` : '';
      return { ok: false, reason: 'error', message: `invalid playbook: ${shown}${more}` };
    }
    // The extractor builds intents within `intentSchema` by construction (closed
    // values from the validated playbook, capped lists, names of 1–80 characters);
    // the tests check it, so no per-call schema parse is paid here.
    const { intent } = extractIntent(loaded.compiled, analyzeGoal(request.text));
    return { ok: true, output: intent, usage: { ...ZERO_USAGE }, latencyMs: performance.now() - started };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: 'error', message: `offline executor failed: ${message}` };
  }
}
