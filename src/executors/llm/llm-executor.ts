/**
 * The LLM executor, for any task: the artifact is a prompt (a template),
 * the model answers the task's output as JSON.
 *
 * Messages, for one execution:
 *
 * - a prompt **without placeholders** (see `prompt-template.ts`) is the
 *   system message, followed by a blank line and the task's output
 *   contract; the input's text (`request.text`) is the user message;
 * - a prompt **with placeholders** (`{{input}}`, `{{input.<field>}}`,
 *   `{{<field>}}`) is filled from the example's input and is the user
 *   message; the system message is the output contract alone.
 *
 * The answer schema goes to the provider as structured output when the
 * task's output is a JSON object (servers that refuse a response format
 * fall back to the contract's words, see `providers/llm-client.ts`). The
 * answer is read leniently (`read-json-answer.ts`: reasoning blocks, code
 * fences and prose around one object are dropped) and checked with the
 * task's output schema: an answer that does not fit is invalid (`schema`)
 * and never scored.
 *
 * Caching, the budget, rate limits, retries and timeouts are the client's:
 * the cache key is the client's settings with the system and user messages,
 * the schema and the repeat, so equal messages share cached answers.
 *
 * `execute` never throws for a bad answer: empty, truncated, unparsable or
 * off-schema answers, refusals, timeouts and refused requests come back as
 * `{ ok: false, reason, message, raw }`, and so does a template that cannot
 * be filled for the example (`error`, no model call). It throws only what
 * must stop the run: an InfrastructureError (bad key, no such model, a
 * server outage that outlasts the retries), a BudgetExceededError, or the
 * abort of `signal`.
 *
 * @module
 */
import type { LlmClient, LlmRequest } from '../../providers/llm-client.ts';
import type { ExecutionRequest, ExecutionResult, Executor } from '../executor.ts';
import { DEFAULT_SCHEMA_NAME, type LlmExecutorTask, llmOutputFormat } from './output-format.ts';
import { fillPromptTemplate } from './prompt-template.ts';
import { readJsonAnswer } from './read-json-answer.ts';

/** Implementation version at the head of the id. Bump when the request layout changes. */
export const LLM_EXECUTOR_VERSION = 'llm@1';

/** Settings of {@link createLlmExecutor}. */
export interface LlmExecutorOptions<Output = unknown> {
  /** The language model port (provider, model, temperature, max output tokens, timeout, cache, budget, limiter). */
  client: LlmClient;
  /** The task: its output schema, and its `outputContract()` when it has one. */
  task: LlmExecutorTask<Output>;
  /** The user asserts the model answers identically for identical requests. Taken into account only with temperature 0. Default false. */
  deterministic?: boolean;
  /**
   * The implementation name and version at the head of the id. Default
   * `llm@1`; a caller that changes the request layout (its own
   * `schemaName`) names itself, as the intent task's executor does
   * (`llm-intent@1`), so its ids and cache keys stay its own.
   */
  name?: string;
  /** Name of the structured-output schema. Default `output`. */
  schemaName?: string;
}

/**
 * Creates the LLM executor for a task.
 *
 * The id is `<name> contract=<8 hex digits of the contract's SHA-256> <client id>`,
 * e.g. `llm@1 contract=1a2b3c4d openai:gpt-4.1-mini host=api.openai.com temperature=0 maxOutputTokens=2048 output=schema`
 * (the output schema itself is the task's, whose id is in the evaluator
 * fingerprint beside this one). `deterministic` is true only when
 * `options.deterministic` is true and the client's temperature is 0.
 *
 * @throws RangeError for a bad `schemaName`; Error when the task has neither an `outputContract()` nor an output schema JSON Schema can express
 * @example
 * ```ts
 * const task = createClassificationTask({ labels: ['billing', 'technical', 'account'] });
 * const executor = createLlmExecutor({ client, task });
 * const result = await executor.execute({ input: { subject: 'Refund', body: 'Charged twice' }, text: 'subject: Refund\nbody: Charged twice', artifact: 'Route the ticket:\n{{subject}}\n{{body}}', repeat: 0 });
 * if (result.ok) console.log(result.output); // { label: 'billing' }
 * ```
 */
export function createLlmExecutor<Output>(options: LlmExecutorOptions<Output>): Executor {
  const { client, task } = options;
  const schemaName = options.schemaName ?? DEFAULT_SCHEMA_NAME;
  const format = llmOutputFormat(task, schemaName);
  return {
    id: `${options.name ?? LLM_EXECUTOR_VERSION} contract=${format.contractHash} ${client.id}`,
    deterministic: options.deterministic === true && client.settings.temperature === 0,
    ...(client.maxInFlight !== undefined ? { maxInFlight: client.maxInFlight } : {}),
    async execute(request: ExecutionRequest): Promise<ExecutionResult> {
      if (request.signal?.aborted) throw request.signal.reason;
      const filled = fillPromptTemplate(request.artifact, request.input, request.text);
      if (!filled.ok)
        return {
          ok: false,
          reason: 'error',
          message: `the prompt template cannot be filled for this example: ${filled.message}`,
        };
      const messages: Pick<LlmRequest, 'system' | 'prompt'> =
        filled.placeholders === 0
          ? { system: `${request.artifact.trimEnd()}\n\n${format.contract}`, prompt: request.text }
          : { system: format.contract, prompt: filled.text };
      const response = await client.generate({
        ...messages,
        ...(format.answerSchema !== undefined ? { schema: format.answerSchema } : {}),
        repeat: request.repeat,
        ...(request.signal !== undefined ? { signal: request.signal } : {}),
      });
      if (!response.ok) {
        return {
          ok: false,
          reason: response.reason,
          message: response.message,
          usage: response.usage,
          latencyMs: response.latencyMs,
          transient: response.transient,
        };
      }
      const answer = readJsonAnswer(response.text, response.finishReason, task.schemas.output, schemaName);
      if (!answer.ok) {
        return {
          ok: false,
          reason: answer.reason,
          message: answer.message,
          raw: answer.raw,
          usage: response.usage,
          latencyMs: response.latencyMs,
        };
      }
      return {
        ok: true,
        output: answer.output,
        raw: answer.raw,
        usage: response.usage,
        latencyMs: response.latencyMs,
        cached: response.cached,
      };
    },
  };
}

/**
 * Characters of what one execution sends the model besides the input: the
 * prompt and the task's output contract, as {@link createLlmExecutor} lays
 * them out (without placeholders, the system message `prompt + "\n\n" +
 * contract`; with them, the contract as the system message and the filled
 * prompt as the user message: the same characters, the input's fields
 * standing where its text would). Add the input's text for one request; for
 * budget estimates before a run.
 *
 * @throws Error as {@link llmOutputFormat} (a task whose output cannot be described)
 */
export function llmRequestCharacters(task: LlmExecutorTask, artifact: string): number {
  return artifact.trimEnd().length + 2 + llmOutputFormat(task).contract.length;
}
