/**
 * Where a study's notebook lives: a SQLite file (the embedded default,
 * `<study>/.kloop/kloop.db`) or a PostgreSQL database (`storage:
 * postgres://…` in kloop.yaml, or `--db <url>` on the command line).
 *
 * A storage target is a string: a `postgres://` or `postgresql://` URL names
 * a PostgreSQL database (and, with `?schema=NAME`, one schema of it: one
 * study per schema, default `public`); anything else is a SQLite file path
 * (or `:memory:`). Passwords need not be in the URL: the `pg` client reads
 * `PGPASSWORD` and `~/.pgpass` as libpq does.
 *
 * Precedence for a study folder: `--db` (this process, {@link setStorageOverride}),
 * then kloop.yaml's `storage`, then the SQLite file in the folder.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors.ts';
import { maskSecrets } from '../text/mask-secrets.ts';

/** A parsed storage target. */
export type StorageTarget =
  | { readonly kind: 'sqlite'; readonly file: string }
  | {
      readonly kind: 'postgres';
      /** The connection string without kloop's own `schema` parameter. */
      readonly connectionString: string;
      /** The schema holding the study's tables (an SQL identifier, lower case). */
      readonly schema: string;
      /** The URL with any password replaced by `***` (`maskSecrets`), for messages. */
      readonly display: string;
    };

/** The backend names. */
export type StorageBackendName = StorageTarget['kind'];

/** A PostgreSQL schema name kloop accepts: lower-case letters, digits and `_`, starting with a letter or `_`, at most 50 characters (the job queue's schema adds a suffix). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,49}$/;

/** True for a `postgres://` or `postgresql://` URL. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target.trim());
}

/**
 * Parses a storage target.
 *
 * @param target a `postgres://` URL (optional `?schema=NAME`) or a SQLite file path
 * @param field where the target came from, for the error (`storage`, `--db`)
 * @throws InputError when a PostgreSQL URL is malformed or its schema is not a plain lower-case identifier
 */
export function parseStorageTarget(target: string, field = 'storage'): StorageTarget {
  if (!isPostgresUrl(target)) return { kind: 'sqlite', file: target };
  let url: URL;
  try {
    url = new URL(target.trim());
  } catch {
    throw new InputError(`not a valid PostgreSQL URL: ${maskSecrets(target)}`, { field, code: 'input.storage' });
  }
  const schema = url.searchParams.get('schema') ?? 'public';
  if (!SCHEMA_NAME.test(schema)) {
    throw new InputError(
      `the schema "${schema}" is not a plain lower-case SQL identifier (letters, digits and _, at most 50 characters)`,
      { field, code: 'input.storage' },
    );
  }
  url.searchParams.delete('schema');
  const display =
    maskSecrets(url.toString()) + (schema === 'public' ? '' : `${url.search === '' ? '?' : '&'}schema=${schema}`);
  return { kind: 'postgres', connectionString: url.toString(), schema, display };
}

/** How a target is named in messages: the file, or the redacted URL. */
export function describeTarget(target: StorageTarget): string {
  return target.kind === 'sqlite' ? target.file : target.display;
}

let override: string | undefined;

/** Sets (or, with undefined, clears) this process's `--db` target: every study opened afterwards uses it. */
export function setStorageOverride(target: string | undefined): void {
  if (target !== undefined) parseStorageTarget(target, '--db');
  override = target;
}

/** This process's `--db` target, if any. */
export function storageOverride(): string | undefined {
  return override;
}

/** Where a study keeps its SQLite database: `<study>/.kloop/kloop.db`. */
export function sqliteStudyFile(studyDir: string): string {
  return path.join(studyDir, '.kloop', 'kloop.db');
}

/** A top-level `storage: <url>` line of kloop.yaml (plain, single- or double-quoted, an end-of-line comment allowed). */
const STORAGE_LINE = /^storage[ \t]*:[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#'"][^\s#]*))[ \t]*(?:#.*)?$/m;

/**
 * kloop.yaml's `storage` value, read from its top-level line without parsing
 * the rest of the file (cheap, for every command; the config loader
 * validates the key: src/config/config.ts). Undefined when the file or the
 * key is absent.
 */
function configuredStorage(studyDir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(studyDir, 'kloop.yaml'), 'utf8');
  } catch {
    return undefined;
  }
  const match = STORAGE_LINE.exec(text);
  const value = (match?.[1] ?? match?.[2] ?? match?.[3])?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The storage target of a study folder: `--db`, else kloop.yaml's `storage`,
 * else the SQLite file `<study>/.kloop/kloop.db`. A string for
 * {@link openDatabase} (src/storage/database.ts).
 */
export function studyStorage(studyDir: string): string {
  return override ?? configuredStorage(path.resolve(studyDir)) ?? sqliteStudyFile(studyDir);
}

/** True when the study's notebook is in PostgreSQL. */
export function isPostgresStudy(studyDir: string): boolean {
  return isPostgresUrl(studyStorage(studyDir));
}
