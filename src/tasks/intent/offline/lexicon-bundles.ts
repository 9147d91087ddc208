/**
 * Learned-lexicon bundles: the entity terms the optimization gold teaches,
 * proposed together as one playbook edit, and how near-duplicate bundles are
 * told apart.
 *
 * Pure.
 */
import type { EntityRole } from '../vocabulary.ts';
import type { EditCandidate, ExampleEvidence } from './edit-evidence.ts';
import { nameKey, termKey } from './extract.ts';
import type { Playbook } from './playbook.ts';
import type { PlaybookEdit } from './playbook-edit.ts';
import { describePlaybookEdit } from './playbook-edit.ts';

/** Least number of optimization examples whose gold names a term before a learned-lexicon bundle takes it. */
export const LEXICON_MIN_SUPPORT = 2;

/**
 * Learned-lexicon bundles: the entity terms the optimization gold teaches,
 * proposed together as one edit (`entityTerms += {...}`), so that a gain
 * spread thinly over many examples can reach significance where no single
 * term can.
 *
 * A term joins when the goal texts of at least `minSupport` optimization
 * examples name it (all its words occur) and their gold has it as an entity
 * (by name or alias), the extractor misses it in at least one of them, more
 * than half of the examples whose text names it have it in their gold (a
 * lexicon entry must be right more often than not), and the playbook neither
 * knows, stops nor reads it as an attribute. Its role is the gold's most
 * frequent role. Two bundles are returned — every term with support
 * `minSupport`, and the terms with support `minSupport + 1` — unless they are
 * near-duplicates ({@link isNearDuplicateBundle}); each has at least two terms.
 */
export function learnedLexiconBundles(
  playbook: Playbook,
  examples: readonly ExampleEvidence[],
  minSupport = LEXICON_MIN_SUPPORT,
): EditCandidate[] {
  const known = new Set(
    [
      ...Object.keys(playbook.entityTerms),
      ...Object.keys(playbook.entityAliases),
      ...playbook.stopList,
      ...playbook.attributeTerms,
    ].map(termKey),
  );
  const contains = (example: ExampleEvidence, phrase: string): boolean =>
    phrase.split(' ').every((word) => example.analysis.keySet.has(word));
  const gold = new Map<string, { examples: Set<string>; missed: Set<string>; roles: Map<EntityRole, number> }>();
  for (const example of examples) {
    const missed = new Set(example.diagnostics.missedEntities.map((name) => nameKey(name)));
    for (const entity of example.expected.entities ?? []) {
      const isMissed = missed.has(nameKey(entity.name));
      for (const name of [entity.name, ...(entity.aliases ?? [])]) {
        const key = nameKey(name);
        if (
          !/^[a-z][a-z -]*[a-z]$/.test(key) ||
          key.split(' ').length > 3 ||
          known.has(termKey(key)) ||
          !contains(example, key)
        )
          continue;
        const entry = gold.get(key) ?? {
          examples: new Set<string>(),
          missed: new Set<string>(),
          roles: new Map<EntityRole, number>(),
        };
        entry.examples.add(example.id);
        if (isMissed) entry.missed.add(example.id);
        if (entity.role !== undefined) entry.roles.set(entity.role, (entry.roles.get(entity.role) ?? 0) + 1);
        gold.set(key, entry);
      }
    }
  }
  const eligible = [...gold]
    .filter(
      ([key, entry]) =>
        entry.examples.size >= minSupport &&
        entry.missed.size > 0 &&
        entry.examples.size * 2 > examples.filter((example) => contains(example, key)).length,
    )
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const bundles: EditCandidate[] = [];
  const seen: Array<Set<string>> = [];
  for (const support of [minSupport, minSupport + 1]) {
    const chosen = eligible.filter(([, entry]) => entry.examples.size >= support);
    if (chosen.length < 2) continue;
    const entries: Record<string, string> = {};
    const sources = new Set<string>();
    for (const [key, entry] of chosen) {
      const role =
        [...entry.roles].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ??
        playbook.unknownNounPolicy.role;
      entries[key] = role;
      for (const id of entry.missed) sources.add(id);
    }
    const edit: PlaybookEdit = { op: 'setMany', path: ['entityTerms'], entries };
    const delta = describePlaybookEdit(edit);
    const terms = new Set(Object.keys(entries));
    if (seen.some((other) => isNearDuplicateBundle(other, terms))) continue;
    seen.push(terms);
    bundles.push({ edit, delta, kind: 'lexiconBundle', sources, preRank: sources.size });
  }
  return bundles;
}

/** Jaccard similarity of two term sets at or above which two bundles are near-duplicates. */
export const BUNDLE_DUPLICATE_SIMILARITY = 0.8;

/** Whether two bundles' term sets overlap by {@link BUNDLE_DUPLICATE_SIMILARITY} or more (Jaccard similarity). */
export function isNearDuplicateBundle(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  let shared = 0;
  for (const term of a) if (b.has(term)) shared += 1;
  const union = a.size + b.size - shared;
  return union > 0 && shared / union >= BUNDLE_DUPLICATE_SIMILARITY;
}

/**
 * The terms of a learned-lexicon bundle delta (`entityTerms += {...}`), or
 * null for any other delta: what near-duplicate bundles are compared by.
 */
export function lexiconBundleTerms(delta: string): Set<string> | null {
  const match = /^entityTerms \+= (\{.*\})$/.exec(delta);
  if (match === null) return null;
  try {
    return new Set(Object.keys(JSON.parse(match[1]!) as Record<string, unknown>));
  } catch {
    return null;
  }
}
