/**
 * Generic English analysis of a goal text with compromise: sentences, words
 * with lemmas (singular nouns, infinitive verbs) and noun runs. It knows
 * nothing about business domains and does not depend on any playbook, so it is
 * computed once per goal text and cached. compromise itself loads with the
 * first analysis (../load-compromise.ts).
 */
import { z } from 'zod';
import { loadCompromise } from '../load-compromise.ts';
import type { AnalysisStore } from './analysis-store.ts';
import { defaultAnalysisStore } from './analysis-store.ts';
import { singularizeWord } from '../names.ts';
import {
  POSSESSIVE_DETERMINERS,
  wordClassOf,
  markParticles,
  markPositionalCapitals,
  markReciprocals,
  retagPluralNouns,
} from './word-passes.ts';

/**
 * Coarse word class of a word, from the NLP library's tags: what the relation
 * reader needs to find clauses (verbs, copulas, prepositions, conjunctions,
 * determiners and quantities around noun phrases).
 */
export type WordClass = (typeof WORD_CLASSES)[number];
/** Every {@link WordClass}. */
export const WORD_CLASSES = [
  'noun',
  'verb',
  'copula',
  'auxiliary',
  'adjective',
  'adverb',
  'determiner',
  'preposition',
  'conjunction',
  'pronoun',
  'value',
  'other',
] as const;

/** One word of a goal. */
export interface AnalyzedWord {
  /** Lower-case surface form, apostrophes kept ("patient's", "check-in"). */
  normal: string;
  /** Lemma: singular for nouns, infinitive for verbs, else `normal`. */
  lemma: string;
  /** Every form a cue word may equal to match this word (surface, lemma, verb infinitive of a gerund). */
  keys: readonly string[];
  /** A common or proper noun (pronouns, dates and numbers excluded). */
  isNoun: boolean;
  isProperNoun: boolean;
  /** Tagged by the NLP library as a person/actor noun (therapist, manager). */
  isActor: boolean;
  /** A content word (noun, verb, adjective, adverb) usable as a cue. */
  isContent: boolean;
  /** Index of the sentence the word belongs to. */
  sentence: number;
  /** A noun run cannot continue past this word (punctuation or possessive follows). */
  endsPhrase: boolean;
  /** Coarse word class (see {@link WordClass}). */
  wordClass: WordClass;
  /** A possessive form ("customer's", "customers'"). */
  isPossessive: boolean;
  /** Tagged plural by the NLP library (nouns). */
  isPlural: boolean;
  /** An acronym or abbreviation ("QR", "i.e."). */
  isAcronym: boolean;
  /** Punctuation after the word that ends a clause (`;`, `:`, brackets, sentence end). */
  clauseBreakAfter: boolean;
  /** A comma follows the word. */
  commaAfter: boolean;
  /**
   * The particle of a phrasal verb ("sign *up* for", "check *in*", "take
   * *part* in"): tagged as an adverb, so that the verb and its particle read as
   * one predicate.
   */
  isParticle: boolean;
  /** An opening bracket follows the word (an aside starts; read under `extraction.layoutCues`). */
  opensAside: boolean;
  /** Tagged proper only for a capital that starts its sentence or numbered item, on a WordNet common noun ("Residents shall …"). */
  positionalCapital: boolean;
}

/** The analysis of one goal text. */
export interface GoalAnalysis {
  words: readonly AnalyzedWord[];
  /** Maximal runs of adjacent nouns in one sentence, as [start, end) word indexes. */
  nounRuns: ReadonlyArray<readonly [number, number]>;
  /** Every key of every word, for quick "does the goal mention X" checks. */
  keySet: ReadonlySet<string>;
}

interface CompromiseTerm {
  text: string;
  normal?: string;
  root?: string;
  tags?: string[];
  pre?: string;
  post?: string;
}

type InfinitiveFn = (word: string, model: unknown, tense?: string) => string;
interface NlpWorld {
  methods: { two: { transform: { verb: { toInfinitive: InfinitiveFn } } } };
  model: unknown;
}
/** compromise's world, loaded with compromise on the first analysis (../load-compromise.ts). */
let world: NlpWorld | undefined;
function nlpWorld(): NlpWorld {
  world ??= loadCompromise().world() as unknown as NlpWorld;
  return world;
}

const NOT_NOUN_TAGS = ['Pronoun', 'Date', 'Value', 'Time', 'Duration', 'Month', 'WeekDay', 'Holiday'];
const NOT_CONTENT_TAGS = [
  'Pronoun',
  'Determiner',
  'Preposition',
  'Conjunction',
  'Auxiliary',
  'Copula',
  'Modal',
  'Value',
  'Date',
  'Negative',
  'QuestionWord',
  'Particle',
];
const CONTENT_TAGS = ['Noun', 'Verb', 'Adjective', 'Adverb'];
const cache = new Map<string, GoalAnalysis>();
const CACHE_LIMIT = 20_000;

/**
 * Analyses a goal text (cached by the exact text; the compiled CLI also keeps
 * analyses on disk between processes, see analysis-store.ts).
 *
 * @param goal the user's goal text
 * @returns words with lemmas and match keys, noun runs and the set of keys
 */
export function analyzeGoal(goal: string): GoalAnalysis {
  const cached = cache.get(goal);
  if (cached !== undefined) return cached;
  const analysis = storedAnalysis(goal) ?? analyzeAndStore(goal);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(goal, analysis);
  return analysis;
}

/** Empties the analysis cache (tests and benchmarks); the store on disk stays. */
export function clearGoalAnalysisCache(): void {
  cache.clear();
}

/** The store on disk (analysis-store.ts): opened on first use; null when this code keeps none. */
let store: AnalysisStore<AnalyzedWord> | null | undefined;

/**
 * Sets the store of analyses on disk, or none (`null`); `undefined` goes back
 * to the default — the compiled CLI's store, see analysis-store.ts. For tests.
 */
export function setGoalAnalysisStore(next: AnalysisStore<AnalyzedWord> | null | undefined): void {
  store = next;
}

function analysisStore(): AnalysisStore<AnalyzedWord> | null {
  store ??= defaultAnalysisStore<AnalyzedWord>(import.meta.url);
  return store;
}

/**
 * The shape of a stored analysis: a file that does not have it (written by
 * hand, damaged in a way JSON still parses) is analysed afresh and replaced.
 */
const storedWordSchema = z.strictObject({
  normal: z.string(),
  lemma: z.string(),
  keys: z.array(z.string()),
  isNoun: z.boolean(),
  isProperNoun: z.boolean(),
  isActor: z.boolean(),
  isContent: z.boolean(),
  sentence: z.number().int().nonnegative(),
  endsPhrase: z.boolean(),
  wordClass: z.enum(WORD_CLASSES),
  isPossessive: z.boolean(),
  isPlural: z.boolean(),
  isAcronym: z.boolean(),
  clauseBreakAfter: z.boolean(),
  commaAfter: z.boolean(),
  isParticle: z.boolean(),
  opensAside: z.boolean(),
  positionalCapital: z.boolean(),
}) satisfies z.ZodType<AnalyzedWord>;
const storedWordsSchema = z.array(storedWordSchema);

function storedAnalysis(goal: string): GoalAnalysis | undefined {
  const stored = analysisStore()?.read(goal);
  if (stored === undefined) return undefined;
  const words = storedWordsSchema.safeParse(stored.words);
  if (!words.success || words.data.length === 0) return undefined;
  // The noun runs are the words' own (nounRunsOf): a file whose runs are not is not this code's.
  const nounRuns = nounRunsOf(words.data);
  if (JSON.stringify(nounRuns) !== JSON.stringify(stored.nounRuns)) return undefined;
  return { words: words.data, nounRuns, keySet: keySetOf(words.data) };
}

function analyzeAndStore(goal: string): GoalAnalysis {
  const analysis = analyzeUncached(goal);
  analysisStore()?.write(goal, analysis.words, analysis.nounRuns);
  return analysis;
}

function keySetOf(words: readonly AnalyzedWord[]): Set<string> {
  const keySet = new Set<string>();
  for (const word of words) for (const key of word.keys) keySet.add(key);
  return keySet;
}

function analyzeUncached(goal: string): GoalAnalysis {
  const doc = loadCompromise()(goal);
  doc.compute('root');
  // `root` is honoured by compromise after compute('root') but missing from its option type.
  const jsonOptions = { terms: { normal: true, root: true, tags: true } } as Parameters<typeof doc.json>[0];
  const sentences = doc.json(jsonOptions) as Array<{ terms: CompromiseTerm[] }>;
  const words: AnalyzedWord[] = [];
  sentences.forEach((sentence, sentenceIndex) => {
    const terms = mergeHyphenated(sentence.terms);
    for (const term of terms) {
      const word = toWord(term, sentenceIndex);
      // An opening bracket starts an aside ("categories (brakes, wheels)"); read as such under `extraction.layoutCues`.
      const previous = words[words.length - 1];
      if (/[([]/.test(term.pre ?? '') && previous !== undefined && previous.sentence === sentenceIndex)
        previous.opensAside = true;
      if (word !== null) words.push(word);
      else if (words.length > 0 && words[words.length - 1]!.sentence === sentenceIndex) {
        words[words.length - 1]!.endsPhrase = true;
      }
    }
    if (words.length > 0) {
      words[words.length - 1]!.endsPhrase = true;
      words[words.length - 1]!.clauseBreakAfter = true;
    }
  });
  retagPluralNouns(words);
  markPositionalCapitals(words);
  markParticles(words);
  markReciprocals(words);
  return { words, nounRuns: nounRunsOf(words), keySet: keySetOf(words) };
}

/** Maximal runs of nouns, [start, end), a run ending at a word that ends its phrase. */
function nounRunsOf(words: readonly AnalyzedWord[]): Array<[number, number]> {
  const nounRuns: Array<[number, number]> = [];
  let start = -1;
  words.forEach((word, index) => {
    if (word.isNoun) {
      if (start < 0) start = index;
      if (word.endsPhrase) {
        nounRuns.push([start, index + 1]);
        start = -1;
      }
    } else if (start >= 0) {
      nounRuns.push([start, index]);
      start = -1;
    }
  });
  if (start >= 0) nounRuns.push([start, words.length]);
  return nounRuns;
}

const layoutCache = new WeakMap<GoalAnalysis, GoalAnalysis>();

/**
 * The analysis read with the text's layout (`extraction.layoutCues`): a word
 * before an opening bracket ends its noun phrase ("categories (brakes,
 * wheels)" is Category, then an aside; the clause goes on), and a capital that only
 * starts a sentence or a numbered item ("2. Supporters can donate") does not
 * make a common noun proper. Pure; memoised per analysis.
 */
export function withLayoutCues(analysis: GoalAnalysis): GoalAnalysis {
  const cached = layoutCache.get(analysis);
  if (cached !== undefined) return cached;
  const words = analysis.words.map((word) =>
    word.opensAside || word.positionalCapital
      ? {
          ...word,
          ...(word.opensAside ? { endsPhrase: true } : {}),
          ...(word.positionalCapital ? { isProperNoun: false } : {}),
        }
      : word,
  );
  const view: GoalAnalysis = { words, nounRuns: nounRunsOf(words), keySet: analysis.keySet };
  layoutCache.set(analysis, view);
  return view;
}

/** Abbreviations that introduce examples or restatements ("e.g.", "i.e.", "etc."): never nouns. */
const EXAMPLE_MARKERS = new Set(['eg', 'e.g', 'e.g.', 'ie', 'i.e', 'i.e.', 'etc', 'etc.', 'viz', 'viz.']);

/** Joins "check" "-" "in" into one term "check-in". */
function mergeHyphenated(terms: CompromiseTerm[]): CompromiseTerm[] {
  const merged: CompromiseTerm[] = [];
  for (const term of terms) {
    const previous = merged[merged.length - 1];
    if (previous !== undefined && (previous.post ?? '').trim() === '-') {
      const previousNormal = previous.normal ?? previous.text.toLowerCase();
      const normal = term.normal ?? term.text.toLowerCase();
      merged[merged.length - 1] = {
        text: `${previous.text}-${term.text}`,
        normal: `${previousNormal}-${normal}`,
        root: `${previousNormal}-${term.root ?? normal}`,
        tags: term.tags ?? [],
        pre: previous.pre ?? '',
        post: term.post ?? '',
      };
    } else {
      merged.push({ ...term });
    }
  }
  return merged;
}

function toWord(term: CompromiseTerm, sentence: number): AnalyzedWord | null {
  let normal = (term.normal ?? term.text.toLowerCase()).trim();
  if (normal === '' || !/[\p{L}\p{N}]/u.test(normal)) return null;
  const tags = new Set(term.tags ?? []);
  const bareNormal = normal.replace(/['’]s$/, '').replace(/['’]$/, '');
  normal = normal.replace(/’/g, "'");
  const isPossessive = tags.has('Possessive');
  const isMarker = EXAMPLE_MARKERS.has(bareNormal);
  const isNoun =
    !isMarker &&
    tags.has('Noun') &&
    !NOT_NOUN_TAGS.some((tag) => tags.has(tag)) &&
    !POSSESSIVE_DETERMINERS.has(bareNormal);
  let lemma = (term.root ?? bareNormal).toLowerCase();
  if (isNoun && (tags.has('Plural') || lemma.endsWith('s'))) lemma = singularizeLast(lemma);
  const keys = new Set([normal, bareNormal, lemma]);
  // Every form of "to be" also matches the cue word "be" ("be part of" matches "is part of").
  if (tags.has('Copula') || /^(is|are|was|were|been|being|am)$/.test(bareNormal)) keys.add('be');
  if (/[a-z]{3,}ing$/.test(lemma)) {
    const { methods, model } = nlpWorld();
    const infinitive = methods.two.transform.verb.toInfinitive(lemma, model, 'Gerund');
    if (typeof infinitive === 'string' && infinitive.length >= 3 && infinitive !== lemma) keys.add(infinitive);
  }
  const isContent =
    !isMarker &&
    CONTENT_TAGS.some((tag) => tags.has(tag)) &&
    !NOT_CONTENT_TAGS.some((tag) => tags.has(tag)) &&
    !POSSESSIVE_DETERMINERS.has(bareNormal) &&
    /^\p{L}[\p{L}'-]+$/u.test(lemma);
  const post = term.post ?? '';
  // An abbreviation only when written as one ("approx.", "i.e."): "rep" and "info" written out are words.
  const isAcronym =
    tags.has('Acronym') ||
    (tags.has('Abbreviation') && (/\./.test(term.text) || /\./.test(term.post ?? ''))) ||
    /\./.test(term.text.replace(/\.$/, ''));
  return {
    normal,
    lemma,
    keys: [...keys],
    isNoun,
    // English writes proper nouns with a capital: a lower-case "rep" or "jira" tagged proper is a common noun here.
    isProperNoun: tags.has('ProperNoun') && !tags.has('Acronym') && /^\p{Lu}/u.test(term.text),
    isActor: tags.has('Actor') || (tags.has('Person') && !/^\p{Lu}/u.test(term.text)),
    isContent,
    sentence,
    endsPhrase: isPossessive || /[^\s-]/.test(post),
    wordClass: isNoun ? 'noun' : isMarker ? 'other' : wordClassOf(tags, bareNormal),
    isPossessive: isPossessive && !POSSESSIVE_DETERMINERS.has(bareNormal),
    isPlural: tags.has('Plural'),
    isAcronym,
    clauseBreakAfter: /[;:()[\]!?.]/.test(post.replace(/\.(?=\w)/g, '')),
    commaAfter: post.includes(','),
    isParticle: false,
    opensAside: false,
    positionalCapital: false,
  };
}

function singularizeLast(phrase: string): string {
  const parts = phrase.split('-');
  const last = parts.length - 1;
  parts[last] = singularizeWord(parts[last]!);
  return parts.join('-');
}
