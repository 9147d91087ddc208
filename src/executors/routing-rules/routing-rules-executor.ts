/**
 * The `routing-rules` executor: routes each example's text with the
 * candidate routing-rules file and answers the classification task's output
 * `{ label }`. Deterministic, no model, no I/O.
 *
 * A rules file that does not parse (malformed YAML, an unknown key, a queue
 * outside `queues`, ...) makes every output invalid with reason
 * `unparsable` and the located message; `execute` never throws for it.
 *
 * @example
 * ```ts
 * const executor = createRoutingRulesExecutor();
 * await executor.execute({ input: 'charged twice', text: 'charged twice', artifact: rulesText, repeat: 0 });
 * // { ok: true, output: { label: 'billing' }, raw: '{"label":"billing"}', usage: zeros, latencyMs }
 * ```
 *
 * @module
 */
import type { ExecutionRequest, ExecutionResult, Executor } from '../executor.ts';
import { routeText } from './route-text.ts';
import { ROUTING_RULES_FORMAT_VERSION, type RoutingRulesParseResult, safeParseRoutingRules } from './routing-rules.ts';

/** Implementation id: the executor and the rules format version (bumped when matching changes). */
export const ROUTING_RULES_EXECUTOR_ID = `routing-rules@${ROUTING_RULES_FORMAT_VERSION}`;

/** The file name messages give the artifact. */
const ARTIFACT_NAME = 'rules';

/** Parsed artifacts by text: a study evaluates one candidate on many examples. */
const MAX_CACHED_ARTIFACTS = 64;

/**
 * Creates the routing-rules executor (see the module comment). Each executor
 * keeps its own small cache of parsed rules files (the last 64 texts).
 */
export function createRoutingRulesExecutor(): Executor {
  const parsed = new Map<string, RoutingRulesParseResult>();
  const parse = (text: string): RoutingRulesParseResult => {
    let result = parsed.get(text);
    if (result === undefined) {
      result = safeParseRoutingRules(text, ARTIFACT_NAME);
      if (parsed.size >= MAX_CACHED_ARTIFACTS) parsed.delete(parsed.keys().next().value as string);
      parsed.set(text, result);
    }
    return result;
  };
  return {
    id: ROUTING_RULES_EXECUTOR_ID,
    deterministic: true,
    execute(request: ExecutionRequest): Promise<ExecutionResult> {
      const started = performance.now();
      if (request.signal?.aborted === true) return Promise.reject(request.signal.reason ?? new Error('aborted'));
      let result: ExecutionResult;
      try {
        const rules = parse(request.artifact);
        if (!rules.ok) {
          result = {
            ok: false,
            reason: 'unparsable',
            message: `the routing rules do not parse: ${rules.error.message}`,
            usage: zeroUsage(),
          };
        } else {
          const { label } = routeText(rules.rules, request.text);
          result = { ok: true, output: { label }, raw: JSON.stringify({ label }), usage: zeroUsage() };
        }
      } catch (error) {
        result = {
          ok: false,
          reason: 'error',
          message: `routing-rules executor failed: ${(error as Error).message}`,
          usage: zeroUsage(),
        };
      }
      return Promise.resolve({ ...result, latencyMs: performance.now() - started });
    },
  };
}

function zeroUsage() {
  return { inputTokens: 0, outputTokens: 0, costUsd: 0 };
}
