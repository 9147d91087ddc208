/**
 * The playbook: the editable artifact of the offline intent executor.
 *
 * A playbook is a YAML mapping whose top-level keys are its *sections* (the
 * editable regions a `program.md` can name). Every section is optional; an
 * empty file is a valid (and useless) playbook. Values from the closed
 * vocabularies (`vocabulary.ts`) are checked; anything else is an error that
 * names the section/key path and the YAML line.
 *
 * ```yaml
 * appTypeCues:             # app type → cue words/phrases (optionally weighted)
 *   booking: [book, appointment, { cue: time slot, weight: 2 }]
 * defaultAppType: other    # when no cue matches
 * entityTerms:             # known noun (phrase) → role
 *   time slot: commitment
 * entityAliases:           # surface term → canonical entity name
 *   appointment: Booking
 * stopList: [app, system]  # nouns that are never entities
 * attributeTerms: [name, date]  # nouns that are properties of a record, never entities
 * roleSuffixes:            # generic role rules for unknown nouns (longest suffix wins)
 *   ist: party
 * unknownNounPolicy: { include: true, role: resource, actorRole: party, minMentions: 1, compounds: head, properNouns: false }
 * behaviorCues: { notification: [remind, alert] }
 * projectionCues: { calendar: [calendar] }
 * defaultProjections: [list, form]
 * relationCues: { has many: { cardinality: one_to_many, kind: association }, belongs to: { kind: composition, reverse: true } }
 * cardinalityCues: { one or more: many, each: one }  # quantifier phrase before a noun → one | many
 * appTypeDefaults: { booking: { behaviors: [scheduling], projections: [calendar] } }
 * extraction: { maxEntities: 12, rankBy: salience, knownModifiers: false, verbRelations: true }
 * ```
 *
 * Cue and term matching (see `extract.ts`) is on lower-case word boundaries
 * against each word's surface form and lemma, so the cue `book` matches
 * "book", "books", "booked" and "booking".
 */
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import {
  appTypeSchema,
  behaviorSchema,
  cardinalitySchema,
  entityRoleSchema,
  projectionSchema,
  relationKindSchema,
} from '../intent.ts';
import { NOUN_CATEGORIES } from './noun-senses.ts';
import type { PlaybookError } from './playbook-errors.ts';
import { formatPath, locate } from './playbook-errors.ts';

export { formatPath, formatPlaybookError, type PlaybookError } from './playbook-errors.ts';

export { playbookSectionSpans, playbookSections, type SectionSpan } from './playbook-sections.ts';

/** The sections of a playbook, in their conventional order. */
export const PLAYBOOK_SECTIONS = [
  'appTypeCues',
  'defaultAppType',
  'entityTerms',
  'entityAliases',
  'stopList',
  'attributeTerms',
  'roleSuffixes',
  'unknownNounPolicy',
  'behaviorCues',
  'projectionCues',
  'defaultProjections',
  'relationCues',
  'cardinalityCues',
  'appTypeDefaults',
  'extraction',
] as const;
export type PlaybookSection = (typeof PLAYBOOK_SECTIONS)[number];

/** Name under which {@link playbookSections} reports text before the first section. */
export const PREAMBLE_SECTION = '(preamble)';

/** Lower-cases, trims and collapses whitespace: the canonical form of a cue or term. */
export function normalizeTerm(text: string): string {
  return text.normalize('NFKC').toLowerCase().trim().replace(/\s+/g, ' ');
}

const TERM_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N}'&+\- ]*$/u;
const TERM_MESSAGE = 'use letters, digits, spaces, hyphens and apostrophes only';

/** A cue word or phrase (normalised to lower case). */
const termSchema = z
  .string()
  .transform(normalizeTerm)
  .pipe(z.string().min(1).max(60).regex(TERM_PATTERN, TERM_MESSAGE));
const termKeySchema = z.string().max(60).regex(TERM_PATTERN, TERM_MESSAGE);

/** A cue: a phrase, or a phrase with a weight (weights only matter for app types). */
const cueSchema = z.union([
  termSchema.transform((cue) => ({ cue, weight: 1 })),
  z.strictObject({ cue: termSchema, weight: z.number().positive().max(100).default(1) }),
]);
export type Cue = z.output<typeof cueSchema>;

/** `null` (an empty YAML value) reads as an empty list or map. */
function orEmpty<T extends z.ZodType>(schema: T, empty: () => unknown) {
  return z.preprocess((value) => (value === null ? empty() : value), schema);
}
const cueListSchema = orEmpty(z.array(cueSchema).max(300), () => []);

const unknownNounPolicySchema = z.strictObject({
  /** Whether nouns the playbook does not know become entities. */
  include: z.boolean().default(true),
  /** Role of an unknown noun when no suffix rule applies. */
  role: entityRoleSchema.default('resource'),
  /** Role of an unknown noun the NLP library tags as a person/actor (therapist, driver); absent = use `role`. */
  actorRole: entityRoleSchema.optional(),
  /** An unknown noun must be mentioned at least this many times. */
  minMentions: z.number().int().min(1).max(20).default(1),
  /**
   * For an unknown noun compound ("loyalty card"): keep only the `head` noun,
   * the `full` compound (its last `extraction.maxCompoundWords` nouns), or
   * `auto`: the full compound when the text repeats it or never uses its head
   * noun alone, else the head ("physio clinic … the clinic" → Clinic).
   */
  compounds: z.enum(['head', 'full', 'auto']).default('head'),
  /** Whether proper nouns (capitalised names such as "Acme") may become entities. */
  properNouns: z.boolean().default(false),
  /**
   * With `extraction.rankBy: salience`, the smallest salience an unknown noun needs to be
   * an entity (a noun mentioned once and in no relation has salience 1); terms
   * and aliases of the playbook need none. 0 keeps every candidate.
   */
  minSalience: z.number().int().min(0).max(20).default(0),
  /**
   * Whether an unknown noun must read as a countable thing at least once to be
   * an entity: plural, or after a determiner, a number, a quantifier
   * (`cardinalityCues`) or a possessive ("a card", "orders", "each pump",
   * "the customer's invoices"). Mass nouns and idioms ("on demand", "in
   * addition", "keep track of", "pay by card") never do. Terms and aliases of
   * the playbook need not.
   */
  countableOnly: z.boolean().default(false),
  /**
   * WordNet noun categories (`noun-senses.ts`: attribute, time, quantity, state, …)
   * whose unknown nouns are no entities: a noun whose most frequent sense is in
   * one of them ("speed", "future", "litre") is a property or a circumstance of
   * a record, not a record. A compound is looked up whole, else at its head.
   * Empty (the default) uses no categories.
   */
  excludeCategories: orEmpty(z.array(z.enum(NOUN_CATEGORIES)).max(26), () => []).default([]),
});

const extractionSchema = z.strictObject({
  /** Most entities output: the cap (which ones are kept is `rankBy`). */
  maxEntities: z.number().int().min(0).max(60).default(12),
  /**
   * Which entities fill the cap: `firstMention` (known terms first, then text
   * order) or `salience` (mentions + times the noun is the subject or object
   * of a predicate + distinct entities related to it; ties: known terms, then
   * first mention).
   */
  rankBy: z.enum(['firstMention', 'salience']).default('firstMention'),
  /** Whether an "adjective noun" pair the text uses at least twice ("guided tour") is one compound (then read like a noun compound). */
  adjectiveCompounds: z.boolean().default(false),
  /** Longest unknown compound kept whole, in nouns ("purchase order line" = 3). */
  maxCompoundWords: z.number().int().min(1).max(5).default(3),
  /**
   * Whether an unknown noun whose every mention is possessed by another noun
   * ("the customer's name", "the name of the customer") is an attribute, not an entity.
   */
  structuralAttributes: z.boolean().default(false),
  /** Whether a verb between two entity mentions of one clause relates them (subject → object). */
  verbRelations: z.boolean().default(false),
  /**
   * Whether an entity mention that no reading relates to another noun of its
   * sentence is related to the sentence's topic (the first subject of a
   * predicate in the sentence, else its first entity): a weak, sentence-level
   * association that does not count toward salience.
   */
  sentenceRelations: z.boolean().default(false),
  /**
   * Whether a compound entity relates to the entities its words name: a kind of
   * its head ("temperature sensor" is_a Sensor), one of many of its modifier
   * ("invoice line": Invoice → InvoiceLine).
   */
  compoundRelations: z.boolean().default(false),
  /**
   * Whether an output entity that no reading relates to another output entity
   * joins the model through the entity it shares most sentences with (ties: the
   * more salient, then the first mentioned), one to many: a domain model has no
   * unconnected classes.
   */
  connectOrphans: z.boolean().default(false),
  /**
   * Whether the patterns of hyponymy (Hearst 1992) relate subtypes: "X such
   * as Y", "X, e.g. Y", "Y and other X", "kinds of X: Y, Z" make Y a kind of
   * X (`is_a`), and count toward both nouns' salience.
   */
  subtypePatterns: z.boolean().default(false),
  /** Whether a pronoun subject ("it", "they") stands for the first subject of the previous sentence. */
  pronounSubjects: z.boolean().default(false),
  /**
   * Whether the text's layout is read: a word before an opening bracket ends
   * its noun phrase ("categories (brakes, wheels)": Category, then an aside),
   * and a capital that only starts a sentence or a numbered item ("2.
   * Supporters can donate") does not make a common noun proper. Off: the NLP
   * tagger's reading as is.
   */
  layoutCues: z.boolean().default(false),
  /**
   * Salience at which an entity candidate is kept even past
   * `extraction.maxEntities` (0 = never): a noun the text mentions and
   * relates this often is an entity of a long text whatever the cap.
   */
  overflowSalience: z.number().int().min(0).max(100).default(0),
  /** Whether a possessive ("the customer's orders") relates possessor and possessed entity. */
  possessiveRelations: z.boolean().default(false),
  /**
   * For a noun compound whose head is a playbook term ("purchase order",
   * "meeting room", "progress report" with the term `order`, `room`,
   * `report`): read it at the term (`head`), keep it whole with the term's role
   * (`full`: its last `maxCompoundWords` nouns), or `auto`: whole when the
   * text repeats the compound or never uses the term alone, else at the term.
   */
  termCompounds: z.enum(['head', 'full', 'auto']).default('head'),
  /** Whether a known term used as a modifier ("patient record") is also an entity mention. */
  knownModifiers: z.boolean().default(false),
  maxBehaviors: z.number().int().min(0).max(20).default(8),
  maxProjections: z.number().int().min(0).max(20).default(6),
  maxRelations: z.number().int().min(0).max(120).default(20),
});

const relationCueSchema = z.strictObject({
  /** Fixed cardinality; absent = read from the quantifiers around the two nouns. */
  cardinality: cardinalitySchema.optional(),
  kind: relationKindSchema.default('association'),
  /** The noun after the phrase is the `from` end ("a line belongs to an order": Order → Line). */
  reverse: z.boolean().default(false),
});

const appTypeDefaultSchema = z.strictObject({
  behaviors: orEmpty(z.array(behaviorSchema).max(20), () => []).default([]),
  projections: orEmpty(z.array(projectionSchema).max(20), () => []).default([]),
});

/** The zod schema of a playbook file (after YAML parsing). */
export const playbookSchema = z.strictObject({
  appTypeCues: orEmpty(z.partialRecord(appTypeSchema, cueListSchema), () => ({})).default({}),
  defaultAppType: appTypeSchema.default('other'),
  entityTerms: orEmpty(z.record(termKeySchema, entityRoleSchema), () => ({})).default({}),
  entityAliases: orEmpty(z.record(termKeySchema, z.string().trim().min(1).max(80)), () => ({})).default({}),
  stopList: orEmpty(z.array(termSchema).max(2000), () => []).default([]),
  attributeTerms: orEmpty(z.array(termSchema).max(2000), () => []).default([]),
  roleSuffixes: orEmpty(
    z.record(z.string().regex(/^[a-z]{1,12}$/i, 'a suffix is 1 to 12 letters'), entityRoleSchema),
    () => ({}),
  ).default({}),
  unknownNounPolicy: orEmpty(unknownNounPolicySchema, () => ({})).default(unknownNounPolicySchema.parse({})),
  behaviorCues: orEmpty(z.partialRecord(behaviorSchema, cueListSchema), () => ({})).default({}),
  projectionCues: orEmpty(z.partialRecord(projectionSchema, cueListSchema), () => ({})).default({}),
  defaultProjections: orEmpty(z.array(projectionSchema).max(20), () => []).default([]),
  relationCues: orEmpty(z.record(termKeySchema, relationCueSchema), () => ({})).default({}),
  cardinalityCues: orEmpty(z.record(termKeySchema, z.enum(['one', 'many'])), () => ({})).default({}),
  appTypeDefaults: orEmpty(z.partialRecord(appTypeSchema, appTypeDefaultSchema), () => ({})).default({}),
  extraction: orEmpty(extractionSchema, () => ({})).default(extractionSchema.parse({})),
});

/** A validated playbook with every default filled in. Object key order is the file's order. */
export type Playbook = z.output<typeof playbookSchema>;

export type PlaybookParseResult = { ok: true; playbook: Playbook } | { ok: false; errors: PlaybookError[] };

/** The YAML document of the playbook text read last, with its line counter (see {@link playbookDocument}). */
let lastDocument: { text: string; doc: ReturnType<typeof parseDocument>; lineCounter: LineCounter } | undefined;

/**
 * The YAML document of a playbook text (duplicate keys are errors), with the
 * line counter that locates its nodes. The last one is kept: loading a study
 * reads the artifact's document twice (its schema check, {@link parsePlaybook},
 * and its sections, {@link playbookSectionSpans}), and parses it once. Both
 * only read the document.
 */
export function playbookDocument(text: string): { doc: ReturnType<typeof parseDocument>; lineCounter: LineCounter } {
  if (lastDocument?.text !== text) {
    const lineCounter = new LineCounter();
    lastDocument = {
      text,
      doc: parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true }),
      lineCounter,
    };
  }
  return lastDocument;
}

/**
 * Parses and validates a playbook.
 *
 * @param text the YAML text of the playbook (UTF-8 decoded)
 * @param fileName used only in error records
 * @returns `{ ok: true, playbook }` or `{ ok: false, errors }` naming section/key and line; never throws
 * @example
 * const result = parsePlaybook('defaultAppType: booking\n');
 * if (result.ok) console.log(result.playbook.defaultAppType); // "booking"
 */
export function parsePlaybook(text: string, fileName?: string): PlaybookParseResult {
  const { doc, lineCounter } = playbookDocument(text);
  const base = fileName === undefined ? {} : { file: fileName };
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((error) => {
        const position = lineCounter.linePos(error.pos[0]);
        return {
          ...base,
          line: position.line,
          column: position.col,
          path: '',
          message: `YAML: ${firstLine(error.message)}`,
        };
      }),
    };
  }
  const data: unknown = doc.toJS() ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return {
      ok: false,
      errors: [{ ...base, line: 1, column: 1, path: '', message: 'a playbook is a YAML mapping of sections' }],
    };
  }
  const parsed = playbookSchema.safeParse(data);
  if (parsed.success) return { ok: true, playbook: parsed.data };
  const errors: PlaybookError[] = [];
  for (const issue of parsed.error.issues) {
    const path = issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const keyPath = [...path, key];
        const message =
          path.length === 0
            ? `unknown section "${key}"; sections are ${PLAYBOOK_SECTIONS.join(', ')}`
            : `unknown key "${key}"${allowedKeysHint(path)}`;
        errors.push({ ...base, ...locate(doc, lineCounter, keyPath, true), path: formatPath(keyPath), message });
      }
      continue;
    }
    const isKey = issue.code === 'invalid_key';
    const message = isKey ? `invalid key: ${issue.issues.map((inner) => inner.message).join('; ')}` : issue.message;
    errors.push({ ...base, ...locate(doc, lineCounter, path, isKey), path: formatPath(path), message });
  }
  errors.sort((a, b) => a.line - b.line || a.column - b.column);
  return { ok: false, errors };
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

function allowedKeysHint(path: ReadonlyArray<string | number>): string {
  const section = path[0];
  if (path.length !== 1) return '';
  const keys: Record<string, string[]> = {
    appTypeCues: appTypeSchema.options,
    appTypeDefaults: appTypeSchema.options,
    behaviorCues: behaviorSchema.options,
    projectionCues: projectionSchema.options,
    unknownNounPolicy: Object.keys(unknownNounPolicySchema.shape),
    extraction: Object.keys(extractionSchema.shape),
  };
  const allowed = typeof section === 'string' ? keys[section] : undefined;
  return allowed === undefined ? '' : `; expected one of ${allowed.join(', ')}`;
}
