/**
 * The executor contract: runs an artifact (a playbook, a prompt, a rules
 * file, a program's configuration) on one example's input and returns the
 * task's output, or says why it could not.
 *
 * An output that cannot be produced or read is *invalid*: it is returned as
 * `{ ok: false }` with its reason and raw text, and is never turned into a
 * score. The evaluator checks a returned output against the task's output
 * schema; an output that does not fit is invalid too (`schema`).
 *
 * Contract (tested for every executor in `executor-contract.test.ts`):
 * `execute` never throws for a bad answer (only for what must stop the run:
 * an InfrastructureError, a BudgetExceededError, the abort of `signal`); an
 * invalid output is never a score of 0; the output does not depend on
 * `exampleId` (it is for logs and error context only).
 */
import type { ExecutionUsage } from '../providers/usage.ts';

/** Token usage of one execution (defined beside the model clients that count it). */
export type { ExecutionUsage };

/** Why an execution produced no output. */
export type InvalidReason =
  | 'empty' // nothing came back
  | 'truncated' // the answer was cut off (length limit)
  | 'unparsable' // not JSON / not readable
  | 'schema' // read, but does not fit the task's output schema
  | 'refused' // the model refused
  | 'timeout'
  | 'error'; // any other failure (network, provider, a program that crashed)

export type ExecutionResult =
  | {
      ok: true;
      /** The task's output (checked against the task's output schema by the evaluator). */
      output: unknown;
      raw?: string;
      usage?: ExecutionUsage;
      latencyMs?: number;
      cached?: boolean;
    }
  | {
      ok: false;
      reason: InvalidReason;
      message: string;
      raw?: string;
      usage?: ExecutionUsage;
      latencyMs?: number;
      /**
       * True for a failure of the infrastructure rather than an outcome of the
       * artifact: a timeout of a model call, a network or server error that
       * outlasted the retries. Transient failures are never stored as results;
       * the next evaluation executes them again. Default false (a terminal outcome).
       */
      transient?: boolean;
    };

/** One call of an executor. */
export interface ExecutionRequest {
  /** The example's input, as the task's input schema has it (a text, or an object). */
  input: unknown;
  /** The input's text (the task's `text(input)`): what a model reads when no template names fields. */
  text: string;
  /** The full text of the artifact being evaluated. */
  artifact: string;
  /** Repeat index (0-based): repeats are fresh samples, part of every cache key. */
  repeat: number;
  /** Example id, for logs and error context only; executors must not use it to decide. */
  exampleId?: string;
  signal?: AbortSignal;
}

/**
 * An executor. `id` names the implementation and every setting that changes
 * its answers (model, temperature, program, timeout, ...); it is part of the
 * evaluator fingerprint. `deterministic` executors give the same answer for
 * the same request.
 */
export interface Executor {
  readonly id: string;
  readonly deterministic: boolean;
  /**
   * Most executions this executor runs at once, by its own limit (an `llm`
   * executor: its provider's `providers.<name>.maxInFlight`; a `command`
   * executor: `executor.concurrency`). The study's evaluator issues at least
   * this many executions per artifact, so the limit is reached. Absent: no
   * limit of its own (an in-process executor).
   */
  readonly maxInFlight?: number;
  execute(request: ExecutionRequest): Promise<ExecutionResult>;
}
