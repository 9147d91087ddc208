/**
 * The LLM intent executor: the generic LLM executor
 * (`executors/llm/llm-executor.ts`) with the intent task. The artifact is a
 * prompt (markdown); the model reads it as its system message, with the
 * intent task's fixed output contract (`output-contract.ts`) appended, and
 * the goal text as the user message, and answers in the public intent JSON
 * format through structured output (schema name `intent`; or, on servers
 * without it, JSON asked for in the prompt and parsed from the text).
 *
 * Requests, ids and cache keys are those of the executor this one replaced
 * (`llm-intent@1`): for a prompt without `{{…}}` placeholders, the system
 * message is `buildExecutorSystemPrompt(artifact)`, the user message the
 * goal and the schema `INTENT_ANSWER_SCHEMA`, so stored answers keep
 * serving. A prompt with placeholders is a template (see
 * `executors/llm/prompt-template.ts`; the goal is `{{input}}`).
 *
 * Two forms: {@link createIntentLlmExecutor} on the task-agnostic executor
 * contract (`executors/executor.ts`: `{ input, text }` in, `{ output }`
 * out), and {@link createLlmIntentExecutor} on the intent executor contract
 * (`tasks/executor.ts`: `{ goal }` in, `{ intent }` out), which the engine
 * uses until it moves to the generic contract.
 *
 * `execute` never throws for a bad answer: empty, truncated, unparsable or
 * off-schema answers, refusals, timeouts and refused requests come back as
 * `{ ok: false, reason, message, raw }`. It throws only what must stop the
 * run: an InfrastructureError (bad key, no such model, a server outage that
 * outlasts the retries), a BudgetExceededError, or the abort of `signal`.
 */
import { createLlmExecutor } from '../../../executors/llm/llm-executor.ts';
import type { Executor } from '../../../executors/executor.ts';
import type { LlmClient } from '../../../providers/llm-client.ts';
import { intentTask } from '../intent-task.ts';
import { INTENT_SCHEMA_NAME } from './parse-intent-answer.ts';

/** Implementation version, part of the executor id. Bump when the request layout changes. */
export const LLM_INTENT_EXECUTOR_VERSION = 'llm-intent@1';

export interface LlmIntentExecutorOptions {
  client: LlmClient;
  /**
   * The user asserts the model answers identically for identical requests.
   * Taken into account only with temperature 0. Default false.
   */
  deterministic?: boolean;
}

/**
 * Creates the LLM intent executor on the task-agnostic executor contract:
 * `request.input` and `request.text` are the goal; `output` is an
 * {@link Intent} (checked with `intentSchema`).
 *
 * The id names the implementation, contract hash, provider, model, base URL
 * host, temperature, max output tokens and structured-output mode, e.g.
 * `llm-intent@1 contract=1a2b3c4d openai:gpt-4.1-mini host=api.openai.com temperature=0 maxOutputTokens=2048 output=schema`.
 * `deterministic` is true only when `options.deterministic` is true and the temperature is 0.
 *
 * @example
 * ```ts
 * const executor = createIntentLlmExecutor({ client });
 * const goal = 'A clinic books patients with therapists.';
 * const result = await executor.execute({ input: goal, text: goal, artifact: promptText, repeat: 0 });
 * if (result.ok) console.log((result.output as Intent).appType);
 * ```
 */
export function createIntentLlmExecutor(options: LlmIntentExecutorOptions): Executor {
  return createLlmExecutor({
    client: options.client,
    task: intentTask,
    name: LLM_INTENT_EXECUTOR_VERSION,
    schemaName: INTENT_SCHEMA_NAME,
    ...(options.deterministic !== undefined ? { deterministic: options.deterministic } : {}),
  });
}

/** The LLM intent executor (the name compose.ts and older callers use): {@link createIntentLlmExecutor}. */
export const createLlmIntentExecutor: (options: LlmIntentExecutorOptions) => Executor = createIntentLlmExecutor;
