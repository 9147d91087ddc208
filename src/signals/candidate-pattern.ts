/**
 * Drafting a candidate pattern (YAML in the format of
 * `src/assembly/pattern.ts`) from a recurring shape that Loop C or Loop D
 * found. A draft is a starting point for a reviewer, never applied directly:
 * it goes to the review queue, whose approval writes it into the study's
 * `patterns/` folder.
 *
 * Entity roles come from a role index built from the corpus gold and the
 * pattern library (`createRoleIndex`); a name found in neither gets role
 * `resource` and is listed in `guessedRoles` so the reviewer checks it. Each
 * entity gets a few default fields per role (a commitment gets a `startsAt`
 * time field, as the pattern rules require). Every draft is validated with
 * the pattern parser; `valid` and `issues` say whether it loads as is.
 */
import { stringify } from 'yaml';
import { truncateText } from '../text/characters.ts';
import type { IntentExample } from '../corpus/intent-example.ts';
import { parsePatternText } from '../assembly/pattern-library.ts';
import type { Pattern, PatternInput } from '../assembly/pattern.ts';
import { normalizeEntityName } from '../tasks/intent/names.ts';
import { APP_TYPES, BEHAVIORS, ENTITY_ROLES, type EntityRole } from '../tasks/intent/vocabulary.ts';

/** Normalised entity name → its most frequent role. */
export type RoleIndex = ReadonlyMap<string, EntityRole>;

/** Builds a role index from gold entities (names and aliases) and pattern entities (names and aliases). */
export function createRoleIndex(examples: readonly IntentExample[], patterns: readonly Pattern[] = []): RoleIndex {
  const votes = new Map<string, Map<EntityRole, number>>();
  const vote = (name: string, role: EntityRole | undefined): void => {
    if (role === undefined) return;
    const key = normalizeEntityName(name);
    if (key === '') return;
    let roles = votes.get(key);
    if (roles === undefined) {
      roles = new Map();
      votes.set(key, roles);
    }
    roles.set(role, (roles.get(role) ?? 0) + 1);
  };
  for (const example of examples) {
    for (const entity of example.expected.entities ?? []) {
      vote(entity.name, entity.role);
      for (const alias of entity.aliases ?? []) vote(alias, entity.role);
    }
  }
  for (const pattern of patterns) {
    for (const entity of pattern.entities) {
      vote(entity.name, entity.role);
      for (const alias of entity.aliases) vote(alias, entity.role);
    }
  }
  const index = new Map<string, EntityRole>();
  for (const [key, roles] of votes) {
    const best = [...roles.entries()].sort((left, right) => right[1] - left[1] || (left[0] < right[0] ? -1 : 1))[0];
    if (best !== undefined) index.set(key, best[0]);
  }
  return index;
}

/** What a draft is made from. */
export interface PatternDraftInput {
  /** Words the id is built from, e.g. `['booking', 'kennel']` → `candidate-booking-kennel`. */
  idWords: readonly string[];
  title: string;
  description: string;
  /** App class of the shape; a value outside the app-type vocabulary becomes `other`. */
  appType: string;
  /** Entity names, with a role when it is known. */
  entities: ReadonlyArray<{ name: string; role?: string }>;
  behaviors: readonly string[];
  /**
   * A pattern to extend: the draft keeps its entities, relations and
   * projections and adds the new entities and behaviours (under a new id).
   */
  base?: Pattern;
}

/** A drafted pattern. */
export interface PatternDraft {
  /** Pattern id (kebab-case, at most 60 characters); also the review item's `payload.name`. */
  id: string;
  yaml: string;
  /** Whether the YAML loads as a pattern as it stands. */
  valid: boolean;
  issues: string[];
  /** Entity names whose role was guessed (`resource`). */
  guessedRoles: string[];
}

/** Lower-case kebab slug of some words, at most `maximum` characters. */
export function slugify(words: readonly string[], maximum = 60): string {
  const slug = words
    .join(' ')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const trimmed = slug.slice(0, maximum).replace(/-+$/g, '');
  return /^[a-z]/.test(trimmed) ? trimmed : `p-${trimmed}`.slice(0, maximum).replace(/-+$/g, '');
}

function titleCase(name: string): string {
  return name
    .split(' ')
    .filter((word) => word !== '')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' ');
}

const DEFAULT_FIELDS: Record<EntityRole, PatternInput['entities'][number]['fields']> = {
  party: [
    { name: 'name', type: 'TEXT', required: true },
    { name: 'email', type: 'TEXT' },
  ],
  resource: [{ name: 'name', type: 'TEXT', required: true }],
  transaction: [
    { name: 'amount', type: 'NUMERIC', required: true },
    { name: 'occurredAt', type: 'DATETIME', required: true },
  ],
  commitment: [
    { name: 'startsAt', type: 'DATETIME', required: true },
    { name: 'endsAt', type: 'DATETIME' },
  ],
  document: [
    { name: 'title', type: 'TEXT', required: true },
    { name: 'submittedAt', type: 'DATETIME' },
  ],
  reference: [{ name: 'name', type: 'TEXT', required: true }],
};

/**
 * Drafts a pattern. Never throws: problems show in `valid`/`issues`.
 *
 * @param roleIndex roles of known names (see {@link createRoleIndex})
 */
export function draftPattern(input: PatternDraftInput, roleIndex: RoleIndex = new Map()): PatternDraft {
  const id = slugify(['candidate', ...input.idWords]);
  const appType = Object.hasOwn(APP_TYPES, input.appType) ? input.appType : 'other';
  const guessedRoles: string[] = [];
  const seen = new Set<string>();
  const entities: PatternInput['entities'] = [];
  for (const entity of input.base?.entities ?? []) {
    seen.add(normalizeEntityName(entity.name));
    for (const alias of entity.aliases) seen.add(normalizeEntityName(alias));
    entities.push(entity);
  }
  for (const entity of input.entities) {
    const key = normalizeEntityName(entity.name);
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    let role: EntityRole;
    if (entity.role !== undefined && Object.hasOwn(ENTITY_ROLES, entity.role)) role = entity.role as EntityRole;
    else {
      const known = roleIndex.get(key);
      if (known !== undefined) role = known;
      else {
        role = 'resource';
        guessedRoles.push(entity.name);
      }
    }
    entities.push({ name: titleCase(key), role, fields: DEFAULT_FIELDS[role] });
  }
  const behaviors = [...new Set([...(input.base?.behaviors ?? []), ...input.behaviors])].filter((behavior) =>
    Object.hasOwn(BEHAVIORS, behavior),
  ) as PatternInput['behaviors'];
  const projections: NonNullable<PatternInput['projections']> = [...(input.base?.projections ?? [])];
  if (input.base === undefined) {
    const first = entities[0];
    if (first !== undefined) projections.push({ kind: 'list', entity: first.name });
    const commitment = entities.find((entity) => entity.role === 'commitment');
    if (commitment !== undefined) projections.push({ kind: 'calendar', entity: commitment.name });
  }
  const appTypes = [...new Set([...(input.base?.appTypes ?? []), appType])];
  const pattern = {
    id,
    title: truncateText(input.title, 120, ''),
    description: truncateText(input.description, 2000, ''),
    appTypes,
    entities,
    relations: [...(input.base?.relations ?? [])],
    behaviors,
    projections,
  };
  const header = [
    `# Candidate pattern drafted by kloop (${input.title}).`,
    '# Review before approving: entity names, roles, fields, relations and projections are a starting point.',
    ...(guessedRoles.length > 0 ? [`# Roles guessed (check them): ${guessedRoles.join(', ')}`] : []),
  ];
  const yaml = `${header.join('\n')}\n${stringify(pattern, { lineWidth: 100, aliasDuplicateObjects: false })}`;
  const parsed = entities.length === 0 ? undefined : parsePatternText(yaml, `${id}.yaml`);
  const issues =
    parsed === undefined
      ? ['a pattern needs at least one entity']
      : parsed.success
        ? []
        : parsed.issues.map((issue) => `${issue.field ?? ''}${issue.field !== undefined ? ': ' : ''}${issue.message}`);
  return { id, yaml, valid: issues.length === 0, issues, guessedRoles };
}
