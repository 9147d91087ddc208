/**
 * The executor of a study built in code (src/api/create-study.ts): the
 * caller's `execute` function, and the outputs the caller hands in itself
 * (`seedOutputs`, `tell(candidate, results)`), kept by artifact hash,
 * example id and repeat and used before `execute`.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { Example } from '../corpus/example.ts';
import { InputError } from '../errors.ts';
import type { ExecutionResult, Executor } from '../executors/executor.ts';
import { hashOf, untilAborted } from './code-adapters.ts';
import type { CreateStudyOptions } from './study-types.ts';

/** One output the caller gives for an artifact. */
export type CallerResult = { exampleId: string; output: unknown; repeat?: number };

/** The outputs the caller handed in, by artifact hash, example id and repeat. */
export interface CallerOutputs {
  /** The hash of the seed artifact. */
  readonly seedHash: string;
  /**
   * Checks every output given for one artifact (before any is kept: a bad one
   * leaves nothing behind), then keeps them.
   *
   * @param name the option they came in (`seedOutputs`, `results`), for errors
   * @throws InputError for a malformed result, an unknown example, a repeat out of range or two results for one repeat
   */
  take(hash: string, results: ReadonlyArray<CallerResult> | undefined, name: string): void;
  /** Whether an output was given, and which. */
  get(hash: string, exampleId: string, repeat: number): { found: true; output: unknown } | { found: false };
}

/** Creates the store of caller outputs for a study with these examples and `repeats` repeats per example. */
export function createCallerOutputs(examples: readonly Example[], repeats: number, seedHash: string): CallerOutputs {
  const given = new Map<string, unknown>();
  const keyOf = (hash: string, exampleId: string, repeat: number): string => `${hash}\u0000${exampleId}\u0000${repeat}`;
  return {
    seedHash,
    take(hash, results, name) {
      if (results !== undefined && !Array.isArray(results))
        throw new InputError(`${name} must be an array of { exampleId, output, repeat? }`, { field: name });
      const seen = new Set<string>();
      for (const [index, result] of (results ?? []).entries()) {
        const field = `${name}[${index}]`;
        if (typeof result !== 'object' || result === null || typeof result.exampleId !== 'string')
          throw new InputError('a result must be { exampleId, output, repeat? } with a string exampleId', { field });
        if (!examples.some((example) => example.id === result.exampleId))
          throw new InputError(`no example "${result.exampleId}"`, { field: `${field}.exampleId` });
        const repeat = result.repeat ?? 0;
        if (!Number.isInteger(repeat) || repeat < 0 || repeat >= repeats) {
          throw new InputError(
            `repeat must be an integer from 0 to ${repeats - 1} (gate.repeats is ${repeats}), got ${JSON.stringify(repeat)}`,
            { field: `${field}.repeat` },
          );
        }
        const key = keyOf(hash, result.exampleId, repeat);
        if (seen.has(key))
          throw new InputError(`two results for example "${result.exampleId}", repeat ${repeat}`, { field });
        seen.add(key);
      }
      for (const result of results ?? []) given.set(keyOf(hash, result.exampleId, result.repeat ?? 0), result.output);
    },
    get(hash, exampleId, repeat) {
      const key = keyOf(hash, exampleId, repeat);
      return given.has(key) ? { found: true, output: given.get(key) } : { found: false };
    },
  };
}

/** The error of an output neither given nor computable (a study without `execute`). */
function missingOutput(outputs: CallerOutputs, hash: string, exampleId: string, repeat: number): InputError {
  const seed = hash === outputs.seedHash;
  return new InputError(
    `no output for example "${exampleId}" (repeat ${repeat}) of ${seed ? 'the seed artifact' : `the artifact ${hash.slice(0, 12)}`}: this study has no execute, so kloop scores the outputs you give — the seed's as createStudy({ seedOutputs }), a candidate's as tell(candidate, results), each for every example of every partition (an artifact's outputs once given are stored and reused)`,
    { field: seed ? 'seedOutputs' : 'results', exampleId },
  );
}

/**
 * The study's executor: an output the caller gave, else the caller's
 * `execute` (a throw or an output that is not JSON is a failed execution,
 * not a crash of the run), else an InputError naming what to give.
 */
export function callerExecutor<Input>(
  options: Pick<CreateStudyOptions<Input>, 'execute' | 'executorId'>,
  deterministic: boolean,
  outputs: CallerOutputs,
): Executor {
  const execute = options.execute;
  return {
    id: options.executorId ?? (execute !== undefined ? `code:${hashOf(String(execute))}` : 'caller-outputs'),
    deterministic,
    async execute(request): Promise<ExecutionResult> {
      const hash = contentHash(request.artifact);
      const given = outputs.get(hash, request.exampleId ?? '', request.repeat);
      if (given.found) return { ok: true, output: given.output };
      if (execute === undefined) throw missingOutput(outputs, hash, request.exampleId ?? '', request.repeat);
      try {
        // A workflow that never settles still stops with the study (the abort rejects the wait).
        const output = await untilAborted(
          execute(request.artifact, request.input as Input, {
            repeat: request.repeat,
            text: request.text,
            ...(request.signal !== undefined ? { signal: request.signal } : {}),
          }),
          request.signal,
        );
        try {
          JSON.stringify(output);
        } catch (error) {
          // Outputs are stored as JSON: one that cannot be (a BigInt, a cycle) is an invalid output, not a crash of the run.
          return {
            ok: false,
            reason: 'error',
            message: `execute returned an output that is not JSON: ${error instanceof Error ? error.message : String(error)}`,
          };
        }
        return { ok: true, output };
      } catch (error) {
        if (request.signal?.aborted === true) throw error;
        return {
          ok: false,
          reason: 'error',
          message: `execute threw: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
    },
  };
}
