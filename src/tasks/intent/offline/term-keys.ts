/**
 * The lookup keys of the offline extractor: a playbook term's key, an entity
 * name's key and PascalCase name, a phrase's accepted word forms, and
 * whether an analysed word matches them. Memoised (bounded caches).
 */
import { normalizeEntityName, singularizeWord } from '../names.ts';
import type { AnalyzedWord } from './goal-analysis.ts';
import { normalizeTerm } from './playbook.ts';

/**
 * Memoised per playbook string: every candidate playbook the proposer screens
 * is compiled afresh, and nearly all its terms and cues are the incumbent's.
 */
const termKeyCache = new Map<string, string>();
const phraseWordsCache = new Map<string, ReadonlyArray<readonly string[]>>();
const TERM_CACHE_LIMIT = 50_000;

/** The lookup key of a playbook term: normalised, last word singular. */
export function termKey(text: string): string {
  let key = termKeyCache.get(text);
  if (key === undefined) {
    const words = normalizeTerm(text).split(' ');
    const last = words.length - 1;
    words[last] = singularizeForm(words[last]!);
    key = words.join(' ');
    if (termKeyCache.size >= TERM_CACHE_LIMIT) termKeyCache.clear();
    termKeyCache.set(text, key);
  }
  return key;
}

function singularizeForm(word: string): string {
  const parts = word.split('-');
  const last = parts.length - 1;
  parts[last] = singularizeWord(parts[last]!);
  return parts.join('-');
}

/** A phrase's words, each with its accepted forms (as written, singular); shared between compiled playbooks, never changed. */
export function phraseWords(text: string): ReadonlyArray<readonly string[]> {
  let words = phraseWordsCache.get(text);
  if (words === undefined) {
    words = normalizeTerm(text)
      .split(' ')
      .map((word) => [...new Set([word, singularizeForm(word)])]);
    if (phraseWordsCache.size >= TERM_CACHE_LIMIT) phraseWordsCache.clear();
    phraseWordsCache.set(text, words);
  }
  return words;
}

export function wordMatches(word: AnalyzedWord, forms: readonly string[]): boolean {
  for (const form of forms) if (word.keys.includes(form)) return true;
  return false;
}

const nameKeyCache = new Map<string, string>();
const entityNameCache = new Map<string, string>();

/** {@link normalizeEntityName}, memoised (names repeat across examples and candidate playbooks). */
export function nameKey(name: string): string {
  let key = nameKeyCache.get(name);
  if (key === undefined) {
    key = normalizeEntityName(name);
    if (nameKeyCache.size > 100_000) nameKeyCache.clear();
    nameKeyCache.set(name, key);
  }
  return key;
}

/** PascalCase singular entity name of a term or canonical name ("time slot" → "TimeSlot"). */
export function entityNameOf(text: string): string {
  let name = entityNameCache.get(text);
  if (name === undefined) {
    name = nameKey(text)
      .split(' ')
      .filter((word) => word !== '')
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join('');
    if (entityNameCache.size > 100_000) entityNameCache.clear();
    entityNameCache.set(text, name);
  }
  return name;
}
