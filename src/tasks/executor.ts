/**
 * The executor contract: runs an artifact (a playbook, a prompt) on one goal
 * text and returns an intent, or says why it could not.
 *
 * An output that cannot be produced or parsed is *invalid*: it is returned as
 * `{ ok: false }` with its raw text and is never turned into a score.
 */
import type { Intent } from './intent/intent.ts';

/** Token usage of one execution; zeros for executors that call no model. */
export interface ExecutionUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** Why an execution produced no intent. */
export type InvalidReason =
  | 'empty' // nothing came back
  | 'truncated' // the answer was cut off (length limit)
  | 'unparsable' // not JSON / not readable
  | 'schema' // parsed but does not fit the intent schema
  | 'refused' // the model refused
  | 'timeout'
  | 'error'; // any other failure (network, provider, executor bug)

export type ExecutionResult =
  | { ok: true; intent: Intent; raw?: string; usage?: ExecutionUsage; latencyMs?: number; cached?: boolean }
  | {
      ok: false;
      reason: InvalidReason;
      message: string;
      raw?: string;
      usage?: ExecutionUsage;
      latencyMs?: number;
      /**
       * True for a failure of the infrastructure rather than an outcome of the
       * artifact: a timeout, a network or server error that outlasted the
       * retries. Transient failures are never stored as results; the next
       * evaluation executes them again. Default false (a terminal outcome).
       */
      transient?: boolean;
    };

/** One call of an executor. */
export interface ExecutionRequest {
  /** The user's goal text. */
  goal: string;
  /** The full text of the artifact being evaluated. */
  artifact: string;
  /** Repeat index (0-based): repeats are fresh samples, part of every cache key. */
  repeat: number;
  /** Example id, for logs and error context only; executors must not use it to decide. */
  exampleId?: string;
  signal?: AbortSignal;
}

/**
 * An executor. `id` names the implementation and every setting that changes its
 * answers (model, temperature, ...); it is part of the evaluator fingerprint.
 * `deterministic` executors give the same answer for the same request.
 */
export interface Executor {
  readonly id: string;
  readonly deterministic: boolean;
  execute(request: ExecutionRequest): Promise<ExecutionResult>;
}
