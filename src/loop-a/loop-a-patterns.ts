/**
 * Loop A's pattern proposer: candidate patterns for recurring shapes the
 * pattern library leaves uncovered.
 *
 * It reads the incumbent's Loop A results on the OPTIMIZATION partition only
 * (like every proposer: never anchors or shadow). For each app type, it
 * counts the uncovered intent entities of partial assemblies that are real
 * (they match a gold entity of their example, by normalised name or alias:
 * noise nouns are not mined) and keeps those seen in at least `minSupport`
 * examples. A candidate pattern holds them (named as the gold names them,
 * with the intents' surface names as aliases, fields from the role defaults),
 * plus a hub (the covered entity that co-occurs most with them; ties go to
 * the more central role: commitment, transaction, document, ...) that relates
 * to each of them, and the uncovered behaviours of the same support.
 *
 * A candidate is only a proposal: Loop A's gate scores it on the corpus, and
 * a human decides (the review queue).
 */
import { stringify } from 'yaml';
import { ROLE_DEFAULT_FIELDS } from '../assembly/assembled-app.ts';
import type { AssemblyMethod } from '../assembly/assemble.ts';
import type { Pattern, PatternInput } from '../assembly/pattern.ts';
import { parsePatternText, type PatternLibrary } from '../assembly/pattern-library.ts';
import type { IntentExample } from '../corpus/intent-example.ts';
import type { Intent } from '../tasks/intent/intent.ts';
import { normalizeEntityName } from '../tasks/intent/names.ts';
import { truncateText } from '../text/characters.ts';
import type { AppType, Behavior, Cardinality, EntityRole } from '../tasks/intent/vocabulary.ts';

/** What the miner reads of one optimization example. */
export interface MiningExample {
  example: IntentExample;
  intent: Intent;
  method: AssemblyMethod;
  uncovered: { entities: readonly string[]; behaviors: readonly Behavior[] };
}

export interface PatternMiningOptions {
  /** Fewest examples an entity or behaviour must recur in. Default 2. */
  minSupport?: number;
  /** Most candidates returned (best supported first). Default 3. */
  maxCandidates?: number;
  /** Most mined entities per pattern (besides the hub). Default 6. */
  maxEntitiesPerPattern?: number;
}

/** One candidate pattern with its YAML text and evidence. */
export interface PatternCandidate {
  pattern: Pattern;
  /** The pattern file's text (validated by `parsePatternText`). */
  yaml: string;
  /** One line: what the pattern adds. */
  delta: string;
  rationale: string;
  support: {
    appType: AppType;
    examples: string[];
    entities: Record<string, number>;
    behaviors: Record<string, number>;
  };
}

/** Hub preference: the entity an app revolves around. */
const HUB_ROLES: readonly EntityRole[] = ['commitment', 'transaction', 'document', 'resource', 'party', 'reference'];

interface Tally {
  name: string;
  role: EntityRole;
  aliases: Set<string>;
  examples: Set<string>;
}

/** Mines candidate patterns; see the module comment. Deterministic: same input, same output. */
export function minePatternCandidates(
  results: readonly MiningExample[],
  library: PatternLibrary,
  options: PatternMiningOptions = {},
): PatternCandidate[] {
  const minSupport = Math.max(1, options.minSupport ?? 2);
  const maxCandidates = options.maxCandidates ?? 3;
  const maxEntities = Math.max(1, options.maxEntitiesPerPattern ?? 6);
  const byType = new Map<AppType, MiningExample[]>();
  for (const result of results) {
    if (result.method !== 'partial' || result.example.partition !== 'optimization') continue;
    byType.set(result.intent.appType, [...(byType.get(result.intent.appType) ?? []), result]);
  }
  const usedIds = new Set(library.patterns.map((pattern) => pattern.id));
  const candidates: Array<{ candidate: PatternCandidate; weight: number }> = [];
  for (const appType of [...byType.keys()].sort()) {
    const group = byType.get(appType)!;
    const mined = mineGroup(group, minSupport, maxEntities);
    if (mined === undefined) continue;
    const id = uniqueId(`mined-${appType.replace(/_/g, '-')}`, usedIds);
    const candidate = toCandidate(id, appType, mined, minSupport);
    if (candidate === undefined) continue;
    usedIds.add(id);
    candidates.push({
      candidate,
      weight: Object.values(candidate.support.entities).reduce((sum, count) => sum + count, 0),
    });
  }
  return candidates
    .sort(
      (left, right) =>
        right.weight - left.weight || left.candidate.pattern.id.localeCompare(right.candidate.pattern.id),
    )
    .slice(0, maxCandidates)
    .map(({ candidate }) => candidate);
}

interface MinedGroup {
  entities: Tally[];
  hub: Tally | undefined;
  behaviors: Array<{ behavior: Behavior; count: number }>;
  examples: string[];
}

function mineGroup(group: readonly MiningExample[], minSupport: number, maxEntities: number): MinedGroup | undefined {
  const uncovered = new Map<string, Tally>();
  const covered = new Map<string, Tally>();
  const behaviorCounts = new Map<Behavior, Set<string>>();
  for (const { example, intent, uncovered: gaps } of group) {
    const gold = example.expected.entities ?? [];
    const goldByKey = new Map<string, (typeof gold)[number]>();
    for (const entity of gold)
      for (const name of [entity.name, ...(entity.aliases ?? [])]) goldByKey.set(normalizeEntityName(name), entity);
    const gapKeys = new Set(gaps.entities.map(normalizeEntityName));
    for (const entity of intent.entities) {
      const key = normalizeEntityName(entity.name);
      const goldEntity = goldByKey.get(key);
      if (gapKeys.has(key)) {
        if (goldEntity === undefined) continue; // noise: not mined
        tally(
          uncovered,
          normalizeEntityName(goldEntity.name),
          goldEntity.name,
          goldEntity.role ?? entity.role,
          entity.name,
          example.id,
        );
      } else {
        tally(covered, key, entity.name, entity.role, entity.name, example.id);
      }
    }
    for (const behavior of gaps.behaviors)
      behaviorCounts.set(behavior, (behaviorCounts.get(behavior) ?? new Set()).add(example.id));
  }
  const entities = [...uncovered.values()]
    .filter((entry) => entry.examples.size >= minSupport)
    .sort((left, right) => right.examples.size - left.examples.size || left.name.localeCompare(right.name))
    .slice(0, maxEntities);
  if (entities.length === 0) return undefined;
  const minedKeys = new Set(entities.map((entry) => normalizeEntityName(entry.name)));
  const supportExamples = new Set(entities.flatMap((entry) => [...entry.examples]));
  const shared = (entry: Tally): number => [...entry.examples].filter((id) => supportExamples.has(id)).length;
  // The hub: the covered entity that co-occurs most with the mined ones; ties by role centrality, then name.
  const hub = [...covered.values()]
    .filter((entry) => !minedKeys.has(normalizeEntityName(entry.name)) && shared(entry) > 0)
    .sort(
      (left, right) =>
        shared(right) - shared(left) ||
        HUB_ROLES.indexOf(left.role) - HUB_ROLES.indexOf(right.role) ||
        left.name.localeCompare(right.name),
    )[0];
  const behaviors = [...behaviorCounts]
    .filter(([, examples]) => examples.size >= minSupport)
    .map(([behavior, examples]) => ({ behavior, count: examples.size }))
    .sort((left, right) => right.count - left.count || left.behavior.localeCompare(right.behavior));
  const examples = [...new Set(entities.flatMap((entry) => [...entry.examples]))].sort();
  return { entities, hub, behaviors, examples };
}

function tally(
  map: Map<string, Tally>,
  key: string,
  name: string,
  role: EntityRole,
  surface: string,
  exampleId: string,
): void {
  const entry = map.get(key) ?? { name, role, aliases: new Set<string>(), examples: new Set<string>() };
  entry.aliases.add(surface);
  entry.examples.add(exampleId);
  map.set(key, entry);
}

function uniqueId(base: string, used: ReadonlySet<string>): string {
  if (!used.has(base)) return base;
  for (let index = 2; ; index += 1) if (!used.has(`${base}-${index}`)) return `${base}-${index}`;
}

/** Relation from the hub to a mined entity: one hub record refers to one party/resource/reference, owns many of the rest. */
function hubCardinality(role: EntityRole): Cardinality {
  return role === 'party' || role === 'resource' || role === 'reference' ? 'many_to_one' : 'one_to_many';
}

function toCandidate(
  id: string,
  appType: AppType,
  mined: MinedGroup,
  minSupport: number,
): PatternCandidate | undefined {
  const members = mined.hub === undefined ? mined.entities : [mined.hub, ...mined.entities];
  const taken = new Set<string>(members.map((entry) => normalizeEntityName(entry.name)));
  const entityInput = (entry: Tally): NonNullable<PatternInput['entities']>[number] => {
    const aliases = [...entry.aliases].filter((alias) => {
      const key = normalizeEntityName(alias);
      if (key === '' || taken.has(key)) return false;
      taken.add(key);
      return true;
    });
    return {
      name: entry.name,
      role: entry.role,
      ...(aliases.length > 0 ? { aliases: aliases.sort() } : {}),
      fields: ROLE_DEFAULT_FIELDS[entry.role].map((field) => ({
        name: field.name,
        type: field.type,
        ...(field.required ? { required: true } : {}),
      })),
    };
  };
  const hub = members[0]!;
  const entities = members.map(entityInput);
  const relations = members.slice(1).map((entry) => ({
    from: hub.name,
    to: entry.name,
    cardinality: hubCardinality(entry.role),
    kind: 'association' as const,
  }));
  const names = mined.entities.map((entry) => entry.name);
  const input: PatternInput = {
    id,
    title: truncateText(`Mined ${appType.replace(/_/g, ' ')} shape: ${names.join(', ')}`, 120, ''),
    description:
      `Candidate pattern proposed by Loop A: in ${mined.examples.length} optimization examples of app type ${appType}, ` +
      `the entities ${names.join(', ')} were left uncovered by the pattern library (each in at least ${minSupport} examples). ` +
      `${mined.hub !== undefined ? `They hang off ${mined.hub.name}, the covered entity they co-occur with most. ` : ''}Review the fields before approving.`,
    appTypes: [appType],
    entities,
    relations,
    behaviors: mined.behaviors.map((entry) => entry.behavior),
  };
  const yaml = `# Mined by kloop Loop A (candidate; approved through the review queue).\n${stringify(input, { lineWidth: 100 })}`;
  const parsed = parsePatternText(yaml, `<candidate ${id}>`);
  if (!parsed.success) return undefined;
  return {
    pattern: parsed.pattern,
    yaml,
    delta: `pattern ${id}: ${mined.hub !== undefined ? `${mined.hub.name} → ` : ''}${names.join(', ')}${mined.behaviors.length > 0 ? `; behaviours ${mined.behaviors.map((entry) => entry.behavior).join(', ')}` : ''}`,
    rationale: `${names.length} entities recur uncovered in ${mined.examples.length} ${appType} optimization examples (support ≥ ${minSupport}).`,
    support: {
      appType,
      examples: mined.examples,
      entities: Object.fromEntries(mined.entities.map((entry) => [entry.name, entry.examples.size])),
      behaviors: Object.fromEntries(mined.behaviors.map((entry) => [entry.behavior, entry.count])),
    },
  };
}
