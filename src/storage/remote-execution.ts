/**
 * The contract between an evaluation (src/evaluator/evaluator.ts) and the
 * processes that may execute its example-repeats instead of it (the
 * evaluation workers of ./evaluation-queue.ts): what is asked, what comes
 * back, and the key both sides use for one example-repeat. Types and one
 * pure function; it lives here so that the queue does not import the
 * evaluator.
 */

/** One example-repeat an evaluation still needs. */
export interface RemoteItem {
  exampleId: string;
  repeat: number;
}

/** What {@link RemoteExecution.execute} is asked to evaluate elsewhere. */
export interface RemoteRequest {
  fingerprint: string;
  artifactHash: string;
  artifactText: string;
  partition: string;
  /** The example-repeats not stored yet, in the evaluation's order. */
  items: readonly RemoteItem[];
  /** As `EvaluatorOptions.readSince` (src/evaluator/evaluator.ts): results stored before it do not count. */
  readSince?: string;
  /** As `EvaluatorOptions.storedAs` (src/evaluator/evaluator.ts): the key the results are stored under, when not `fingerprint`. */
  storedAs?: string;
}

/**
 * Executes example-repeats in other processes (evaluation workers on a job
 * queue: ./evaluation-queue.ts) instead of this one. It resolves
 * once every item is either stored in the study database (by whichever
 * process executed it) or given up; the evaluator then reads the stored
 * results, exactly as it reads results of an earlier run.
 */
export interface RemoteExecution {
  /**
   * @returns the items given up (their job failed on every attempt), with why, keyed by `${repeat}\u0000${exampleId}`;
   *   they count as transient failures (never stored; the next evaluation tries them again)
   */
  execute(request: RemoteRequest, signal?: AbortSignal): Promise<ReadonlyMap<string, string>>;
}

/** The key of one example-repeat in the evaluator's maps (and in {@link RemoteExecution.execute}'s answer). */
export function resultKey(exampleId: string, repeat: number): string {
  return `${repeat}\u0000${exampleId}`;
}
