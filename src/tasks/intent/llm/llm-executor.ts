/**
 * The LLM intent executor: the artifact is a prompt (markdown); the model
 * reads it as its system message, with kloop's fixed output contract
 * appended, and the goal text (the request's `text`, the intent task's text
 * of its input) as the user message, and answers in the
 * public intent JSON format through structured output (or, on servers
 * without it, JSON asked for in the prompt and parsed from the text).
 *
 * `execute` never throws for a bad answer: empty, truncated, unparsable or
 * off-schema answers, refusals, timeouts and refused requests come back as
 * `{ ok: false, reason, message, raw }`. It throws only what must stop the
 * run: an InfrastructureError (bad key, no such model, a server outage that
 * outlasts the retries), a BudgetExceededError, or the abort of `signal`.
 */
import type { LlmClient } from '../../../providers/llm-client.ts';
import type { ExecutionRequest, ExecutionResult, Executor } from '../../../executors/executor.ts';
import { buildExecutorSystemPrompt, INTENT_ANSWER_SCHEMA, OUTPUT_CONTRACT_HASH } from './output-contract.ts';
import { parseIntentAnswer } from './parse-intent-answer.ts';

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
 * Creates the LLM intent executor.
 *
 * The id names the implementation, provider, model, base URL host,
 * temperature, max output tokens, structured-output mode and contract hash,
 * e.g. `llm-intent@1 contract=1a2b3c4d openai:gpt-4.1-mini host=api.openai.com temperature=0 maxOutputTokens=2048 output=schema`.
 * `deterministic` is true only when `options.deterministic` is true and the temperature is 0.
 *
 * @example
 * ```ts
 * const executor = createLlmIntentExecutor({ client });
 * const goal = 'A clinic books patients with therapists.';
 * const result = await executor.execute({ input: goal, text: goal, artifact: promptText, repeat: 0 });
 * if (!result.ok) console.log(result.reason, result.message);
 * ```
 */
export function createLlmIntentExecutor(options: LlmIntentExecutorOptions): Executor {
  const { client } = options;
  return {
    id: `${LLM_INTENT_EXECUTOR_VERSION} contract=${OUTPUT_CONTRACT_HASH} ${client.id}`,
    deterministic: options.deterministic === true && client.settings.temperature === 0,
    async execute(request: ExecutionRequest): Promise<ExecutionResult> {
      const response = await client.generate({
        system: buildExecutorSystemPrompt(request.artifact),
        prompt: request.text,
        schema: INTENT_ANSWER_SCHEMA,
        repeat: request.repeat,
        ...(request.signal !== undefined ? { signal: request.signal } : {}),
      });
      if (!response.ok) {
        return { ok: false, reason: response.reason, message: response.message, usage: response.usage, latencyMs: response.latencyMs, transient: response.transient };
      }
      const answer = parseIntentAnswer(response.text, response.finishReason);
      if (!answer.ok) {
        return { ok: false, reason: answer.reason, message: answer.message, raw: answer.raw, usage: response.usage, latencyMs: response.latencyMs };
      }
      return { ok: true, output: answer.intent, raw: answer.raw, usage: response.usage, latencyMs: response.latencyMs, cached: response.cached };
    },
  };
}
