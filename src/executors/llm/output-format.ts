/**
 * What an LLM executor asks of the model for a task: the output contract it
 * appends to the prompt (the task's `outputContract()`, or the task's output
 * schema as JSON Schema) and the schema it sends for structured output.
 *
 * The contract is kloop's, not the artifact's: a proposer cannot edit it,
 * and its hash is part of the executor id (a changed contract is a new
 * evaluator fingerprint).
 *
 * @module
 */
import type { JSONSchema7 } from 'ai';
import type { ZodType } from 'zod';
import { contentHash } from '../../artifact/content-hash.ts';
import type { AnswerSchema } from '../../providers/llm-client.ts';
import { jsonOutputContract, jsonSchemaOf } from './json-output-contract.ts';

/** What an LLM executor needs of a task: its output schema, and optionally its contract in words. */
export interface LlmExecutorTask<Output = unknown> {
  readonly schemas: { readonly output: ZodType<Output> };
  outputContract?(): string;
}

/** The output format of one task. */
export interface LlmOutputFormat {
  /** The text appended to the system message, after the artifact. */
  contract: string;
  /** The first 8 hex digits of the SHA-256 of `contract`. */
  contractHash: string;
  /**
   * The structured-output schema (the task's output schema as JSON Schema),
   * when that schema is a JSON object's (`type: object`), which is what
   * providers accept as a response format; absent otherwise (the contract
   * alone asks for the JSON, and the answer is read from the text).
   */
  answerSchema?: AnswerSchema;
}

/** Default name of the structured-output schema. */
export const DEFAULT_SCHEMA_NAME = 'output';

/** The contract line of a task without an `outputContract()`. */
export const DEFAULT_CONTRACT_LINE = 'It must fit this JSON Schema.';

const SCHEMA_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The output format of a task.
 *
 * @param task the task (its output schema; its `outputContract()` when it has one)
 * @param schemaName the structured-output schema's name (letters, digits, `_`, `-`; at most 64, as OpenAI requires). Default `output`
 * @throws RangeError when `schemaName` is not such a name
 * @throws Error when the task has no `outputContract()` and its output schema cannot be written as JSON Schema (give it one)
 * @example
 * ```ts
 * const format = llmOutputFormat(createClassificationTask({ labels: ['billing', 'technical'] }));
 * format.contract.split('\n')[1]; // 'Output format (fixed by kloop, not part of the prompt above):'
 * format.answerSchema?.name; // 'output'
 * ```
 */
export function llmOutputFormat(task: LlmExecutorTask, schemaName: string = DEFAULT_SCHEMA_NAME): LlmOutputFormat {
  if (!SCHEMA_NAME.test(schemaName))
    throw new RangeError(`a structured-output schema name is 1 to 64 letters, digits, "_" or "-", not "${schemaName}"`);
  let jsonSchema: Record<string, unknown> | undefined;
  let problem: string | undefined;
  try {
    jsonSchema = jsonSchemaOf(task.schemas.output);
  } catch (error) {
    problem = (error as Error).message;
  }
  const own = task.outputContract?.();
  if (own === undefined && jsonSchema === undefined) {
    throw new Error(
      `the task's output schema cannot be written as JSON Schema (${problem ?? 'unknown reason'}); give the task an outputContract()`,
    );
  }
  const contract = own ?? jsonOutputContract(jsonSchema!, [DEFAULT_CONTRACT_LINE]);
  return {
    contract,
    contractHash: contentHash(contract).slice(0, 8),
    ...(jsonSchema !== undefined && jsonSchema.type === 'object'
      ? { answerSchema: { name: schemaName, jsonSchema: jsonSchema as JSONSchema7 } }
      : {}),
  };
}
