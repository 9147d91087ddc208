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

/** The base of every error kloop throws on purpose. */
export class KloopError extends Error {
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
    super(maskSecrets(options.formatted ?? message), options.cause === undefined ? undefined : { cause: options.cause });
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
  constructor(message: string, options: KloopErrorOptions = {}) {
    super(message, { ...options, code: options.code ?? 'input', exitCode: 2, formatted: formatLocation(message, options) });
  }
}

/** The study database or a file kloop writes could not be read or written. Exit code 1. */
export class StorageError extends KloopError {
  constructor(message: string, options: KloopErrorOptions = {}) {
    super(message, { ...options, code: options.code ?? 'storage', exitCode: 1 });
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
  readonly isRetryable: boolean;
  readonly statusCode?: number;

  constructor(message: string, options: InfrastructureErrorOptions = {}) {
    super(message, { ...options, code: options.code ?? 'infrastructure', exitCode: 1 });
    this.isRetryable = options.isRetryable ?? false;
    if (options.statusCode !== undefined) this.statusCode = options.statusCode;
  }
}

/** True when `value` is any kloop error. */
export function isKloopError(value: unknown): value is KloopError {
  return value instanceof KloopError;
}
