/**
 * Checks of what `createStudy` is given from plain JavaScript, where the
 * types do not reach: its options (each wrong one an `InputError` naming the
 * field, before anything is written), and a proposer's answer (anything but
 * candidates is a failed answer with a reason, as a thrown error is, never a
 * crash of the loop).
 *
 * @module
 */
import { InputError } from '../errors.ts';
import { changeOf } from '../loop/integrate.ts';
import type { Candidate, ProposalFailure, ProposalResult } from '../proposers/proposer.ts';

/** Every option `createStudy` reads; any other name is refused (a key that does nothing is an error, as in kloop.yaml). */
const KNOWN_OPTIONS: ReadonlySet<string> = new Set([
  'storage',
  'artifact',
  'examples',
  'task',
  'score',
  'outcome',
  'execute',
  'seedOutputs',
  'deterministic',
  'executorId',
  'proposer',
  'program',
  'gate',
  'stopping',
  'weights',
  'candidatesPerRound',
  'concurrency',
  'seed',
  'sectionsOf',
  'onEvent',
  'signal',
  'calibration',
]);

/** kloop.yaml's `stopping:` keys, for the hint when one is given at the top level. */
const STOPPING_KEYS: ReadonlySet<string> = new Set([
  'maxExperiments',
  'plateauRounds',
  'plateauMinSpent',
  'idleRounds',
  'maxConsecutiveFailures',
  'target',
  'maxRounds',
  'maxFailureRate',
]);

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object' || typeof value === 'function')
    return `${typeof value === 'function' ? 'a function' : 'an object'}`;
  return `${typeof value} ${String(value)}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks the options of `createStudy` that its types promise and plain
 * JavaScript may break: the kinds of the values, integers ≥ 1 for
 * `candidatesPerRound` and `concurrency` (0 would loop without end), an
 * integer seed ≥ 0, finite weights ≥ 0, a proposer object with an `id`, and
 * no unknown option.
 *
 * @throws InputError naming the field (`storage`, `concurrency`, `weights.x`, `proposer.id`, …)
 */
export function checkStudyOptions(options: unknown): void {
  if (!isPlainObject(options))
    throw new InputError(`createStudy takes one options object, got ${describeValue(options)}`, { field: 'options' });
  for (const name of Object.keys(options)) {
    if (KNOWN_OPTIONS.has(name)) continue;
    const hint = STOPPING_KEYS.has(name) ? ` (a stopping criterion: give it as stopping: { ${name}: … })` : '';
    throw new InputError(`unknown option "${name}"${hint}`, { field: name });
  }
  const kind = (field: string, expected: string, ok: (value: unknown) => boolean, required = false): void => {
    const value = options[field];
    if (value === undefined && !required) return;
    if (!ok(value))
      throw new InputError(
        `${field} must be ${expected}, got ${value === undefined ? 'nothing' : describeValue(value)}`,
        { field },
      );
  };
  const isFunction = (value: unknown): boolean => typeof value === 'function';
  kind(
    'storage',
    'a folder path (a non-empty string)',
    (value) => typeof value === 'string' && value.trim() !== '',
    true,
  );
  kind('artifact', "the seed artifact's text (a string)", (value) => typeof value === 'string', true);
  kind('examples', 'an array of examples ({ id, input, expected, partition })', Array.isArray, true);
  for (const [index, example] of (options.examples as unknown[]).entries()) {
    if (!isPlainObject(example))
      throw new InputError(
        `an example must be an object ({ id, input, expected, partition }), got ${describeValue(example)}`,
        { field: `examples[${index}]` },
      );
  }
  kind('execute', 'a function (artifact, input, context) → output', isFunction);
  kind('seedOutputs', 'an array of { exampleId, output, repeat? }', Array.isArray);
  kind('score', 'a function (output, expected, input) → score', isFunction);
  kind('task', 'a task object', isPlainObject);
  kind('deterministic', 'true or false', (value) => typeof value === 'boolean');
  kind('executorId', 'a non-empty string', (value) => typeof value === 'string' && value.trim() !== '');
  kind('program', "program.md's text (a string)", (value) => typeof value === 'string');
  kind('gate', 'an object of kloop.yaml gate: keys', isPlainObject);
  kind('stopping', 'an object of kloop.yaml stopping: keys', isPlainObject);
  kind('weights', 'an object of weights by component name', isPlainObject);
  kind('candidatesPerRound', 'an integer ≥ 1', (value) => Number.isInteger(value) && (value as number) >= 1);
  kind('concurrency', 'an integer ≥ 1', (value) => Number.isInteger(value) && (value as number) >= 1);
  kind('seed', 'an integer ≥ 0', (value) => Number.isSafeInteger(value) && (value as number) >= 0);
  kind('sectionsOf', 'a function (text) → { section: text }', isFunction);
  kind('onEvent', 'a function (event) → void', isFunction);
  kind('signal', 'an AbortSignal', (value) => value instanceof AbortSignal);
  const isCalibration = (value: unknown): boolean =>
    isPlainObject(value) &&
    typeof value.noiseSd === 'number' &&
    Number.isFinite(value.noiseSd) &&
    value.noiseSd >= 0 &&
    isPlainObject(value.exampleSds);
  kind('calibration', '{ noiseSd: a number ≥ 0, exampleSds: { exampleId: SD } }', isCalibration);
  for (const [name, weight] of Object.entries((options.weights as Record<string, unknown> | undefined) ?? {})) {
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0)
      throw new InputError(`a weight must be a finite number ≥ 0, got ${describeValue(weight)}`, {
        field: `weights.${name}`,
      });
  }
  const proposer = options.proposer;
  if (typeof proposer !== 'function') {
    if (!isPlainObject(proposer) || typeof proposer.propose !== 'function') {
      throw new InputError(
        `proposer must be a function (context) → candidates, or an object { id, propose(context) }, got ${proposer === undefined ? 'nothing' : describeValue(proposer)}`,
        { field: 'proposer' },
      );
    }
    if (typeof proposer.id !== 'string' || proposer.id.trim() === '') {
      throw new InputError('a proposer object needs an id: a non-empty string, stored with each experiment', {
        field: 'proposer.id',
      });
    }
  }
}

/**
 * A proposer's answer as the loop takes it: a list of candidates, or `{
 * candidates, failures }`. Anything else is a failed answer (`malformed`,
 * with what came); a list entry that is not `{ text: string, delta?: string,
 * rationale?: string }` is a failed candidate beside the good ones. A missing
 * `delta` is the lines the candidate adds and removes.
 *
 * @param incumbentText the text the candidates edit (for a missing delta)
 */
export function normalizeProposal(answer: unknown, incumbentText: string): ProposalResult {
  let items: unknown[];
  const failures: ProposalFailure[] = [];
  let extra: Pick<ProposalResult, 'repeats' | 'usage'> = {};
  if (Array.isArray(answer)) items = answer;
  else if (isPlainObject(answer) && Array.isArray(answer.candidates)) {
    items = answer.candidates;
    if (Array.isArray(answer.failures)) {
      for (const failure of answer.failures) {
        failures.push(
          isPlainObject(failure) && typeof failure.reason === 'string'
            ? (failure as unknown as ProposalFailure)
            : { code: 'malformed', reason: `a failure that is not { reason }: ${describeValue(failure)}` },
        );
      }
    }
    if (typeof answer.repeats === 'number') extra = { ...extra, repeats: answer.repeats };
    if (isPlainObject(answer.usage)) extra = { ...extra, usage: answer.usage as NonNullable<ProposalResult['usage']> };
  } else {
    return {
      candidates: [],
      failures: [
        {
          code: 'malformed',
          reason: `the proposer returned ${answer === undefined ? 'nothing' : describeValue(answer)}, not a list of candidates or { candidates, failures }`,
        },
      ],
    };
  }
  const candidates: Candidate[] = [];
  for (const [index, item] of items.entries()) {
    const why = !isPlainObject(item)
      ? `is ${describeValue(item)}, not { text }`
      : typeof item.text !== 'string'
        ? `has no text (a string), got ${item.text === undefined ? 'nothing' : describeValue(item.text)}`
        : item.delta !== undefined && typeof item.delta !== 'string'
          ? `has a delta that is not a string (${describeValue(item.delta)})`
          : item.rationale !== undefined && typeof item.rationale !== 'string'
            ? `has a rationale that is not a string (${describeValue(item.rationale)})`
            : null;
    if (why !== null) {
      failures.push({ code: 'malformed', scope: 'candidate', reason: `candidate ${index + 1} ${why}` });
      continue;
    }
    const candidate = item as unknown as Candidate & { delta?: string; rationale?: string };
    candidates.push({
      ...candidate,
      delta: candidate.delta ?? changeOf(incumbentText, candidate.text),
      rationale: candidate.rationale ?? '',
    });
  }
  return { candidates, failures, ...extra };
}
