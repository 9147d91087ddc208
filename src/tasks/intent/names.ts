/**
 * Entity-name normalisation shared by the scorer, the offline executor and
 * corpus admission: case, separators, camelCase and plural/singular.
 *
 * `normalizeEntityName('PurchaseOrders') === normalizeEntityName('purchase_order')`
 * === `'purchase order'`. Only the last word is singularised (head noun), with
 * compromise's English inflection rules — its two small modules only
 * (./load-compromise.ts, `loadSingularRules`), so that comparing names, as
 * corpus admission does whenever a study is loaded, does not load the whole
 * library.
 */
import { loadSingularRules } from './load-compromise.ts';

/** compromise's irregular plurals, plural → singular (inverted once: its toSingular inverts them on every call). */
let irregularSingulars: Map<string, string> | undefined;
/** The model handed to toSingular once the irregulars are looked up here: its rules only read `two.irregularPlurals`. */
const RULES_ONLY_MODEL = { two: { irregularPlurals: {} } };

/** Words that end in "s" but are singular (or invariant) in business vocabulary. */
const INVARIANT = new Set([
  'status',
  'sms',
  'species',
  'series',
  'news',
  'analysis',
  'bus',
  'campus',
  'canvas',
  'gas',
  'basis',
  'diagnosis',
  'thesis',
  'axis',
  'crisis',
  'bonus',
  'census',
  'corpus',
  'virus',
  'alias',
  'class',
  'address',
  'business',
  'process',
  'access',
  'progress',
  'success',
  'glass',
  'pass',
  'boss',
  'lens',
  'kudos',
  'logistics',
  'analytics',
  'payroll',
  'plus',
  'terms',
  'goods',
  'premises',
  'minutes',
]);
const EXCEPTIONS: Record<string, string> = { leaves: 'leave', statuses: 'status', buses: 'bus', aliases: 'alias' };

const cache = new Map<string, string>();

/** Singular form of one lower-case English word. */
export function singularizeWord(word: string): string {
  const cached = cache.get(word);
  if (cached !== undefined) return cached;
  let result = word;
  if (EXCEPTIONS[word] !== undefined) result = EXCEPTIONS[word];
  else if (word.length > 3 && !INVARIANT.has(word) && !/(ss|us|is)$/.test(word)) {
    const rules = loadSingularRules(); // loaded once, on the first call
    irregularSingulars ??= new Map(
      Object.entries(rules.irregularPlurals).map(([singular, plural]) => [plural, singular]),
    );
    // The same answer as compromise's toSingular(word, model), without its per-call inversion of the irregulars.
    const singular = irregularSingulars.get(word) ?? rules.toSingular(word, RULES_ONLY_MODEL);
    if (typeof singular === 'string' && singular.length > 0) result = singular;
  }
  if (cache.size > 50_000) cache.clear();
  cache.set(word, result);
  return result;
}

/**
 * The comparison key of an entity name: lower case, camelCase and separators
 * split into single spaces, punctuation dropped, last word singular.
 */
export function normalizeEntityName(name: string): string {
  const cached = normalCache.get(name);
  if (cached !== undefined) return cached;
  const normal = normalizeUncached(name);
  if (normalCache.size > 50_000) normalCache.clear();
  normalCache.set(name, normal);
  return normal;
}

const normalCache = new Map<string, string>();

function normalizeUncached(name: string): string {
  const spaced = name
    .normalize('NFKC')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .replace(/[_\-./\\]+/g, ' ')
    .replace(/[^\p{L}\p{N} ]+/gu, '')
    .trim()
    .replace(/\s+/g, ' ');
  if (spaced === '') return '';
  const words = spaced.split(' ');
  const last = words.length - 1;
  words[last] = singularizeWord(words[last]!);
  return words.join(' ');
}
