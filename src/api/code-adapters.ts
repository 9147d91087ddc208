/**
 * What `createStudy` (src/api/create-study.ts) wraps around the caller's code:
 * its score function as a task, its proposer function as a proposer, its
 * progress listener, and the wait on user code that may never settle.
 */
import { createHash } from 'node:crypto';
import { InputError } from '../errors.ts';
import type { RunEvent } from '../loop/run-study.ts';
import type { ProposalContext, Proposer } from '../proposers/proposer.ts';
import { customTaskOf } from '../tasks/custom/custom-task.ts';
import type { Task } from '../tasks/task.ts';
import { normalizeProposal } from './study-options.ts';
import type { CreateStudyOptions, ProposeFunction } from './study-types.ts';

/** The program of a study built in code without one. */
export const DEFAULT_PROGRAM = `## Instructions

Improve the artifact so that more examples score well.

## Constraints

Keep the artifact short and general: no text copied from the examples.

## Stopping criteria

The study's stopping settings.
`;

/** The first 16 hex digits of the SHA-256 of `text` (an id for code given as a function). */
export function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** The study's task: `task` as given, or a custom task around `score`. */
export function taskOf<Input, Expected, Output>(options: CreateStudyOptions<Input, Expected, Output>): Task {
  if (options.task !== undefined && options.score !== undefined)
    throw new InputError('give a task or a score function, not both', { field: 'score' });
  if (options.task !== undefined) return options.task as Task;
  if (options.score === undefined) throw new InputError('a study needs a task or a score function', { field: 'task' });
  return customTaskOf(
    { score: options.score, outcome: options.outcome ?? 'continuous' },
    { file: 'createStudy({ score })', contentHash: createHash('sha256').update(String(options.score)).digest('hex') },
  );
}

/**
 * `value` once it settles, or the signal's reason as soon as the signal
 * aborts while it is pending (user code that may never settle). A value
 * already computed is kept, even when the signal aborted meanwhile: it was
 * paid for, and is stored.
 */
export function untilAborted<T>(value: T | Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined || !(value instanceof Promise)) return Promise.resolve(value);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(value).then(
      (settled) => {
        signal.removeEventListener('abort', onAbort);
        resolve(settled);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The progress listener as the loop calls it: a listener that throws, or
 * returns a promise that rejects, is the caller's bug, not the study's — it
 * neither stops the study nor crashes the process (an unhandled rejection);
 * the first such error is reported once as a process warning
 * (`KLOOP_ON_EVENT`).
 */
export function listenerOf(onEvent: (event: RunEvent) => void): (event: RunEvent) => void {
  let warned = false;
  const warn = (error: unknown): void => {
    if (warned) return;
    warned = true;
    process.emitWarning(
      `the onEvent listener failed (the study goes on; later failures are not reported): ${error instanceof Error ? error.message : String(error)}`,
      { code: 'KLOOP_ON_EVENT' },
    );
  };
  return (event) => {
    try {
      const returned: unknown = onEvent(event);
      if (returned instanceof Promise) returned.catch(warn);
    } catch (error) {
      warn(error);
    }
  };
}

/** A proposer (or a proposer function) whose failures and malformed answers are recorded, never thrown. */
export function proposerOf(proposer: Proposer | ProposeFunction): Proposer {
  const call = typeof proposer === 'function' ? proposer : (context: ProposalContext) => proposer.propose(context);
  return {
    id: typeof proposer === 'function' ? `code:${hashOf(String(proposer))}` : proposer.id,
    async propose(context) {
      let answer: unknown;
      try {
        answer = await untilAborted(call(context), context.signal);
      } catch (error) {
        if (context.signal?.aborted === true) throw error;
        return {
          candidates: [],
          failures: [
            {
              code: 'call_failed',
              reason: `the proposer threw: ${error instanceof Error ? error.message : String(error)}`,
            },
          ],
        };
      }
      return normalizeProposal(answer, context.incumbentText);
    },
  };
}
