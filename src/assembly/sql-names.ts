/**
 * SQL naming rules shared by the pattern schema, the compiler and the gates:
 * snake_case conversion, the identifier rule and the reserved-word list.
 */
import { normalizeEntityName } from '../tasks/intent/names.ts';

/**
 * Reserved words no generated table, view or column may use unquoted.
 *
 * Source: the SQLite keyword list (https://www.sqlite.org/lang_keywords.html)
 * plus PostgreSQL's *reserved* key words (PostgreSQL docs, Appendix C), so a
 * spec that builds in SQLite also stays portable to the Postgres storage.
 */
export const SQL_RESERVED_WORDS: ReadonlySet<string> = new Set(
  `abort action add after all alter always analyze and as asc attach autoincrement before begin between by
  cascade case cast check collate column commit conflict constraint create cross current current_date
  current_time current_timestamp database default deferrable deferred delete desc detach distinct do drop
  each else end escape except exclude exclusive exists explain fail filter first following for foreign from
  full generated glob group groups having if ignore immediate in index indexed initially inner insert instead
  intersect into is isnull join key last left like limit match materialized natural no not nothing notnull
  null nulls of offset on or order others outer over partition plan pragma preceding primary query raise
  range recursive references regexp reindex release rename replace restrict returning right rollback row rows
  savepoint select set table temp temporary then ties to transaction unbounded union unique update using
  vacuum values view virtual when where window with without
  analyse any array asymmetric both current_catalog current_role current_user fetch grant lateral leading
  localtime localtimestamp only placing session_user some symmetric trailing user variadic`
    .split(/\s+/)
    .filter((word) => word.length > 0),
);

/** Longest identifier kept unchanged by every supported database (PostgreSQL truncates at 63 bytes). */
export const MAX_IDENTIFIER_LENGTH = 63;

const IDENTIFIER_PATTERN = /^[a-z_][a-z0-9_]*$/;

/** Whether `word` (any case) is a reserved SQL word. */
export function isReservedWord(word: string): boolean {
  return SQL_RESERVED_WORDS.has(word.toLowerCase());
}

/**
 * Whether `name` is a valid unquoted identifier for generated SQL: lower-case
 * ASCII letters, digits and `_`, not starting with a digit, at most
 * {@link MAX_IDENTIFIER_LENGTH} characters. Reserved words are checked
 * separately ({@link isReservedWord}).
 */
export function isValidIdentifier(name: string): boolean {
  return name.length <= MAX_IDENTIFIER_LENGTH && IDENTIFIER_PATTERN.test(name);
}

/** `startsAt` → `starts_at`, `SLA Policy` → `sla_policy` (no singularisation). */
export function snakeCase(text: string): string {
  return stripMarks(text)
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}

/**
 * The snake_case base name of an entity: its normalised name
 * (`normalizeEntityName`: case, separators, last word singular) with spaces as
 * `_` and accents dropped; a leading digit gets a `t_` prefix.
 * `'Purchase Orders'` → `'purchase_order'`. Not checked against reserved words
 * (see {@link tableNameForEntity}).
 */
export function entityBaseName(entityName: string): string {
  const base = stripMarks(normalizeEntityName(entityName)).replace(/ /g, '_');
  return /^[0-9]/.test(base) ? `t_${base}` : base;
}

/**
 * The table name of an entity: {@link entityBaseName}, plus `_record` when the
 * base is a reserved word (`Order` → `order_record`, `Group` → `group_record`).
 */
export function tableNameForEntity(entityName: string): string {
  const base = entityBaseName(entityName);
  return isReservedWord(base) ? `${base}_record` : base;
}

/** `name`, or `name_2`, `name_3`, ... : the first not in `taken` (which is not modified). */
export function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let suffix = 2; ; suffix += 1) {
    const candidate = `${name}_${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** A single-quoted SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function stripMarks(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '');
}
