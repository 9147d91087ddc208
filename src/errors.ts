/**
 * kloop's errors: one small typed tree.
 *
 * - {@link KloopError}: the base. Every kloop error has a stable `code`, the
 *   process `exitCode` the CLI should use, and the context that locates the
 *   failure (file, line, field, study, experiment, example, partition).
 * - {@link InputError}: bad input or usage (a malformed `program.md`, an
 *   unknown key in `kloop.yaml`, a corpus record with a wrong field). Exit 2.
 * - {@link StorageError}: the study database or a file kloop writes. Exit 1.
 * - {@link InfrastructureError}: a provider, network or timeout failure, with
 *   `isRetryable` and the HTTP `statusCode` when there is one (after the AI
 *   SDK's `APICallError`). Exit 1.
 *
 * Expected outcomes (an unparsable model answer, a refused candidate) are not
 * errors: they are returned as discriminated unions.
 *
 * Identity: each class carries a marker, a property keyed by a registered
 * symbol (`Symbol.for('kloop.error')`, `Symbol.for('kloop.error.input')`,
 * …), and its static `isInstance(value)` checks for it, as the AI SDK's
 * `AISDKError.isInstance` does. Registered symbols are one per process, so an
 * error of a second copy of kloop (the compiled package beside the sources,
 * two versions in one `node_modules`) still matches, where `instanceof`
 * would not; and no check reads `error.name`, which any error may set.
 * `isInstance` of a subclass also matches its own subclasses (their
 * instances carry every marker up the tree).
 *
 * A kloop error's message, detail and file never hold a password: a storage
 * URL in them is masked (`postgres://kloop:***@db/lab`, src/text/mask-secrets.ts).
 *
 * @example
 * ```ts
 * import { InputError } from './errors.ts';
 * const error = new InputError('unknown key "alpah"', { file: 'kloop.yaml', line: 12, field: 'gate.alpah' });
 * error.message; // 'kloop.yaml:12: gate.alpah: unknown key "alpah"'
 * error.exitCode; // 2
 * ```
 */

import { maskSecrets } from './text/mask-secrets.ts';

/** Context that locates a failure. Every member is optional. */
export interface ErrorContext {
  /** File the failure is about (as the user wrote it or absolute). */
  file?: string;
  /** 1-based line in `file`. */
  line?: number;
  /** Dotted path of the offending field, e.g. `gate.alpha` or `corpus[2]`. */
  field?: string;
  /** Absolute path of the study folder. */
  studyPath?: string;
  experimentId?: string;
  exampleId?: string;
  partition?: string;
}

/** Options of every kloop error: its context, an optional `code` override and the underlying `cause`. */
export interface KloopErrorOptions extends ErrorContext {
  /** Stable machine-readable code; each class has a default. */
  code?: string;
  cause?: unknown;
}

/** Whether `value` carries `marker` (an own or inherited property keyed by it, set to true). */
export function hasErrorMarker(value: unknown, marker: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

const KLOOP_ERROR = Symbol.for('kloop.error');
const INPUT_ERROR = Symbol.for('kloop.error.input');
const STORAGE_ERROR = Symbol.for('kloop.error.storage');
const INFRASTRUCTURE_ERROR = Symbol.for('kloop.error.infrastructure');

/** The base of every error kloop throws on purpose. */
export class KloopError extends Error {
  /** The marker {@link KloopError.isInstance} checks. */
  readonly [KLOOP_ERROR] = true;
  /** Stable machine-readable code, e.g. `input`, `storage`, `infrastructure`. */
  readonly code: string;
  /** Process exit code the CLI uses for this error. */
  readonly exitCode: number;
  readonly file?: string;
  readonly line?: number;
  readonly field?: string;
  readonly studyPath?: string;
  readonly experimentId?: string;
  readonly exampleId?: string;
  readonly partition?: string;
  /** The message without the `file:line: field:` prefix. */
  readonly detail: string;

  constructor(message: string, options: KloopErrorOptions & { code: string; exitCode: number; formatted?: string }) {
    // A message or a location may name a storage URL: its password never reaches a message (maskSecrets).
    super(
      maskSecrets(options.formatted ?? message),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.code = options.code;
    this.exitCode = options.exitCode;
    this.detail = maskSecrets(message);
    if (options.file !== undefined) this.file = maskSecrets(options.file);
    if (options.line !== undefined) this.line = options.line;
    if (options.field !== undefined) this.field = options.field;
    if (options.studyPath !== undefined) this.studyPath = options.studyPath;
    if (options.experimentId !== undefined) this.experimentId = options.experimentId;
    if (options.exampleId !== undefined) this.exampleId = options.exampleId;
    if (options.partition !== undefined) this.partition = options.partition;
  }

  /** True when `value` is a kloop error, of this copy of kloop or another (see the module's note on identity). */
  static isInstance(value: unknown): value is KloopError {
    return hasErrorMarker(value, KLOOP_ERROR);
  }
}

/**
 * Formats a located message: `<file>:<line>: <field>: <message>`, leaving out
 * the parts that are unknown (`<file>: <message>`, `<field>: <message>`, ...).
 */
export function formatLocation(message: string, context: ErrorContext): string {
  let location = '';
  if (context.file !== undefined) {
    location = context.line !== undefined ? `${context.file}:${context.line}: ` : `${context.file}: `;
  }
  const field = context.field !== undefined && context.field !== '' ? `${context.field}: ` : '';
  return `${location}${field}${message}`;
}

/** Bad input or usage: a file, field or argument the user must fix. Exit code 2. */
export class InputError extends KloopError {
  readonly [INPUT_ERROR] = true;

  constructor(message: string, options: KloopErrorOptions = {}) {
    super(message, {
      ...options,
      code: options.code ?? 'input',
      exitCode: 2,
      formatted: formatLocation(message, options),
    });
  }

  /** True when `value` is an {@link InputError} (or a subclass), of any copy of kloop. */
  static override isInstance(value: unknown): value is InputError {
    return hasErrorMarker(value, INPUT_ERROR);
  }
}

/** The study database or a file kloop writes could not be read or written. Exit code 1. */
export class StorageError extends KloopError {
  readonly [STORAGE_ERROR] = true;

  constructor(message: string, options: KloopErrorOptions = {}) {
    super(message, { ...options, code: options.code ?? 'storage', exitCode: 1 });
  }

  /** True when `value` is a {@link StorageError} (or a subclass), of any copy of kloop. */
  static override isInstance(value: unknown): value is StorageError {
    return hasErrorMarker(value, STORAGE_ERROR);
  }
}

/** Options of an {@link InfrastructureError}. */
export interface InfrastructureErrorOptions extends KloopErrorOptions {
  /** Whether trying again later may succeed (rate limit, 5xx, timeout). Default false. */
  isRetryable?: boolean;
  /** HTTP status code of the failed call, when there was one. */
  statusCode?: number;
}

/** A provider, network or timeout failure outside kloop's control. Exit code 1. */
export class InfrastructureError extends KloopError {
  readonly [INFRASTRUCTURE_ERROR] = true;
  readonly isRetryable: boolean;
  readonly statusCode?: number;

  constructor(message: string, options: InfrastructureErrorOptions = {}) {
    super(message, { ...options, code: options.code ?? 'infrastructure', exitCode: 1 });
    this.isRetryable = options.isRetryable ?? false;
    if (options.statusCode !== undefined) this.statusCode = options.statusCode;
  }

  /** True when `value` is an {@link InfrastructureError} (or a subclass: the budget's, the loop's), of any copy of kloop. */
  static override isInstance(value: unknown): value is InfrastructureError {
    return hasErrorMarker(value, INFRASTRUCTURE_ERROR);
  }
}

/** True when `value` is any kloop error ({@link KloopError.isInstance}). */
export function isKloopError(value: unknown): value is KloopError {
  return KloopError.isInstance(value);
}

/**
 * True when `value` is the platform's abort or timeout: the `DOMException`
 * an aborted `AbortSignal` (`AbortError`) or `AbortSignal.timeout`
 * (`TimeoutError`) rejects with, or an error a library made after them.
 * These are not kloop's errors and carry no marker: the WHATWG DOM standard
 * names a `DOMException`'s kind by its `name`, so this is the one check that
 * reads a name (as the AI SDK's `isAbortError`).
 *
 * @param kinds the names that count; default both
 */
export function isAbortError(
  value: unknown,
  kinds: ReadonlyArray<'AbortError' | 'TimeoutError'> = ['AbortError', 'TimeoutError'],
): boolean {
  return value instanceof Error && (kinds as readonly string[]).includes(value.name);
}
