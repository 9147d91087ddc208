/**
 * Entity-name normalisation shared by the scorer, the offline executor and
 * corpus admission: case, separators, camelCase and plural/singular.
 *
 * `normalizeEntityName('PurchaseOrders') === normalizeEntityName('purchase_order')`
 * === `'purchase order'`. Only the last word is singularised (head noun), with
 * compromise's English inflection rules.
 */
import nlp from 'compromise';

type SingularFn = (word: string, model: unknown) => string;
const world = nlp.world() as unknown as {
  methods: { two: { transform: { noun: { toSingular: SingularFn } } } };
  model: unknown;
};
const toSingular = world.methods.two.transform.noun.toSingular;

/** Words that end in "s" but are singular (or invariant) in business vocabulary. */
const INVARIANT = new Set([
  'status', 'sms', 'species', 'series', 'news', 'analysis', 'bus', 'campus', 'canvas', 'gas',
  'basis', 'diagnosis', 'thesis', 'axis', 'crisis', 'bonus', 'census', 'corpus', 'virus', 'alias',
  'class', 'address', 'business', 'process', 'access', 'progress', 'success', 'glass', 'pass', 'boss',
  'lens', 'kudos', 'logistics', 'analytics', 'payroll', 'plus', 'terms', 'goods', 'premises', 'minutes',
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
    const singular = toSingular(word, world.model);
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
