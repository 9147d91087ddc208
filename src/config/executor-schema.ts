/** `executor:` of `kloop.yaml` (src/config/config.ts): which executor runs the artifact, and its settings. */
import { z } from 'zod';
import { count } from './schema-numbers.ts';

/** The executor kinds: `offline` (the intent playbook), `routing-rules` (a routing rules file, classification), `llm`, `command` (any program). */
export const EXECUTOR_KINDS = ['offline', 'llm', 'routing-rules', 'command'] as const;
export type ExecutorKind = (typeof EXECUTOR_KINDS)[number];

/** Default `executor.timeoutMs` of an `llm` executor, per call, in ms (the providers' `DEFAULT_TIMEOUT_MS`). */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;
/** Default `executor.maxOutputTokens` of an `llm` executor: most output tokens of one answer. */
export const DEFAULT_LLM_MAX_OUTPUT_TOKENS = 2048;
/** Default `executor.timeoutMs` of a `command` executor, per example, in ms. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
/** Default `executor.concurrency` of a `command` executor: programs at once. */
export const DEFAULT_COMMAND_CONCURRENCY = 4;

/** The keys of `executor:` that only an `llm` executor reads. */
const LLM_ONLY = ['model', 'baseURL', 'apiKeyEnv', 'temperature', 'maxOutputTokens'] as const;

export const executorSchema = z
  .strictObject({
    /**
     * `offline` (deterministic intent playbook executor, no network; task
     * intent), `routing-rules` (a routing rules file; task classification),
     * `llm` (a prompt for a language model) or `command` (any program).
     * Default `offline`.
     */
    kind: z.enum(EXECUTOR_KINDS).default('offline'),
    /** Model id, required for `llm`, e.g. `gpt-4.1-mini`. */
    model: z.string().trim().min(1).optional(),
    /** Base URL of an OpenAI-compatible endpoint. */
    baseURL: z.url().optional(),
    /** Name of the environment variable that holds the API key (never the key itself). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'give the NAME of an environment variable holding the key, not the key itself')
      .optional(),
    /** Sampling temperature in [0, 2]; absent = the provider's default. */
    temperature: z.number().min(0).max(2).optional(),
    maxOutputTokens: count(1).optional(),
    /** Per call (llm, default 60 000) or per example (command, default 30 000), in ms. */
    timeoutMs: count(1).optional(),
    /** `command` only: the program and its arguments (argv), run in the study folder, e.g. `[node, route.mjs]`. */
    command: z
      .array(z.string().min(1, 'an argument is empty'))
      .min(1, 'give the program, e.g. [node, route.mjs]')
      .optional(),
    /** `command` only: programs run at once. Default 4. */
    concurrency: count(1).optional(),
    /**
     * `command` only: the program gives the same output for the same artifact
     * and input (no repeats, no calibration needed, run-to-run noise 0).
     * Default false (a program may sample).
     */
    deterministic: z.boolean().optional(),
  })
  .superRefine((executor, context) => {
    if (executor.kind !== 'llm') {
      for (const key of LLM_ONLY) {
        if (executor[key] !== undefined)
          context.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies to an llm executor only (executor.kind: llm)`,
          });
      }
    }
    if ((executor.kind === 'offline' || executor.kind === 'routing-rules') && executor.timeoutMs !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['timeoutMs'],
        message: `timeoutMs applies to an llm or command executor only; the ${executor.kind} executor runs in-process`,
      });
    }
    if (executor.kind === 'llm' && executor.model === undefined) {
      context.addIssue({ code: 'custom', path: ['model'], message: 'an llm executor needs a model' });
    }
    if (executor.kind === 'command' && executor.command === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'a command executor needs the program to run, e.g. command: [node, route.mjs]',
      });
    }
    if (executor.kind !== 'command') {
      for (const key of ['command', 'concurrency', 'deterministic'] as const) {
        if (executor[key] !== undefined)
          context.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies to a command executor only (executor.kind: command)`,
          });
      }
    }
  });
