/**
 * Playbook edits suggested by an example's entity errors: a missed entity
 * (make the word known, stop stopping it, alias another noun to it), a
 * spurious one (stop it, drop its term or alias, read it as an attribute), a
 * wrong role (the term's role, a suffix rule) and a noun the policy excluded.
 * One function per error; each adds its edits through the shared
 * {@link EditGeneration} (src/tasks/intent/offline/edit-generation.ts).
 *
 * Pure.
 */
import type { EntityRole } from '../vocabulary.ts';
import type { ExampleEvidence } from './edit-evidence.ts';
import { categoryOfName } from './edit-evidence.ts';
import type { EditGeneration } from './edit-generation.ts';
import { nameKey } from './extract.ts';
import { nounCategory } from './noun-senses.ts';

/** Missed entities: make the word known, stop stopping it, or alias another noun to it. */
export function missedEntityEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count, contains, top, goldEntityKeys } = generation;
  const { diagnostics, trace } = example;
  for (const goldName of diagnostics.missedEntities) {
    const gold = example.expected.entities?.find((entity) => entity.name === goldName);
    if (gold === undefined) continue;
    const keys = new Set([gold.name, ...(gold.aliases ?? [])].map((name) => nameKey(name)));
    const role: EntityRole = gold.role ?? playbook.unknownNounPolicy.role;
    const missedPrior = (term: string): number =>
      count(
        (other) =>
          other.diagnostics.missedEntities.some((name) => nameKey(name) === nameKey(gold.name)) &&
          contains(other, term),
      );
    for (const mention of trace.mentions) {
      if (!keys.has(nameKey(mention.text))) continue;
      if (mention.source === 'stop') {
        add(
          { op: 'remove', path: ['stopList'], value: mention.text },
          'stopListRemoval',
          example.id,
          () =>
            missedPrior(mention.text) -
            count(
              (other) =>
                other !== example &&
                !goldEntityKeys.get(other)!.has(nameKey(mention.text)) &&
                contains(other, mention.text),
            ) /
              4,
        );
      } else if (mention.source === 'excluded') {
        add({ op: 'set', path: ['entityTerms', mention.text], value: role }, 'entityTerm', example.id, () =>
          missedPrior(mention.text),
        );
      } else if (mention.source === 'alias') {
        add({ op: 'delete', path: ['entityAliases', mention.text] }, 'aliasRemoval', example.id, () =>
          missedPrior(mention.text),
        );
      }
    }
    for (const key of keys) {
      if (contains(example, key)) {
        if (playbook.entityTerms[key] === undefined) {
          add({ op: 'set', path: ['entityTerms', key], value: role }, 'entityTerm', example.id, () => missedPrior(key));
        }
      }
    }
    // An alias only helps when the goal never names the gold entity itself.
    const named = [...keys].some((key) => contains(example, key));
    const aliasSources = named
      ? []
      : trace.mentions.filter(
          (mention) =>
            mention.source !== 'alias' &&
            /^[a-z][a-z' -]*[a-z]$/.test(mention.text) &&
            mention.text.length >= 3 &&
            !keys.has(nameKey(mention.text)) &&
            !goldEntityKeys.get(example)!.has(nameKey(mention.text)),
        );
    const aliasPrior = (term: string): number =>
      missedPrior(term) - count((other) => goldEntityKeys.get(other)!.has(nameKey(term)) && contains(other, term));
    for (const term of top([...new Set(aliasSources.map((mention) => mention.text))], aliasPrior)) {
      add({ op: 'set', path: ['entityAliases', term], value: gold.name }, 'entityAlias', example.id, () =>
        aliasPrior(term),
      );
    }
  }
}

/** Spurious entities: only matter when they crowd gold entities out of the entity cap. */
export function spuriousEntityEdits(generation: EditGeneration, example: ExampleEvidence, crowded: boolean): void {
  const { playbook, add, count, goldEntityKeys, weighsPrecision } = generation;
  const { diagnostics, trace } = example;
  for (const spurious of diagnostics.spuriousEntities) {
    const mention = trace.mentions.find((entry) => entry.name === spurious);
    if (mention === undefined) continue;
    const key = nameKey(mention.text);
    const prior = (): number =>
      count(
        (other) =>
          other.diagnostics.spuriousEntities.includes(spurious) &&
          (weighsPrecision ||
            (other.diagnostics.missedEntities.length > 0 &&
              other.predictedEntityCount >= playbook.extraction.maxEntities)),
      ) +
      (crowded ? 0 : -0.5) -
      2 * count((other) => goldEntityKeys.get(other)!.has(key));
    if (mention.source === 'unknown')
      add({ op: 'add', path: ['stopList'], value: mention.text }, 'stopWord', example.id, prior);
    else if (mention.source === 'term')
      add({ op: 'delete', path: ['entityTerms', mention.text] }, 'termRemoval', example.id, prior);
    else if (mention.source === 'alias')
      add({ op: 'delete', path: ['entityAliases', mention.text] }, 'aliasRemoval', example.id, prior);
  }
}

/** Wrong roles: set the term's role; for unknown nouns also try a suffix rule. */
export function roleEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count } = generation;
  const { diagnostics, trace } = example;
  for (const wrong of diagnostics.wrongRoles) {
    const gold = example.expected.entities?.find((entity) => entity.name === wrong.entity);
    const keys = new Set([wrong.entity, ...(gold?.aliases ?? [])].map((name) => nameKey(name)));
    const mention = trace.mentions.find((entry) => entry.name !== '' && keys.has(nameKey(entry.name)));
    if (mention === undefined) continue;
    const expected = wrong.expected as EntityRole;
    const termText = mention.source === 'alias' ? nameKey(mention.name) : mention.text;
    const rolePrior = (): number =>
      count((other) =>
        other.diagnostics.wrongRoles.some(
          (entry) => nameKey(entry.entity) === nameKey(termText) && entry.expected === expected,
        ),
      ) -
      count((other) =>
        (other.expected.entities ?? []).some(
          (entity) =>
            nameKey(entity.name) === nameKey(termText) && entity.role !== undefined && entity.role !== expected,
        ),
      );
    add({ op: 'set', path: ['entityTerms', termText], value: expected }, 'role', example.id, rolePrior);
    if (mention.source === 'unknown') {
      const head = mention.text.split(' ').pop() ?? mention.text;
      for (const length of [3, 4]) {
        if (head.length < length + 3 || !/^[a-z]+$/.test(head)) continue;
        const suffix = head.slice(-length);
        if (playbook.roleSuffixes[suffix] === expected) continue;
        add(
          { op: 'set', path: ['roleSuffixes', suffix], value: expected },
          'roleSuffix',
          example.id,
          () =>
            count((other) =>
              other.diagnostics.wrongRoles.some(
                (entry) => entry.expected === expected && nameKey(entry.entity).endsWith(suffix),
              ),
            ) -
            count((other) =>
              (other.expected.entities ?? []).some(
                (entity) =>
                  entity.role !== undefined && entity.role !== expected && nameKey(entity.name).endsWith(suffix),
              ),
            ),
        );
      }
    }
  }
}

/** Spurious entities that crowd the cap may be attributes of a record ("name", "date"). */
export function attributeTermEdits(generation: EditGeneration, example: ExampleEvidence, crowded: boolean): void {
  const { add, count, goldEntityKeys } = generation;
  const { diagnostics, trace } = example;
  if (crowded) {
    for (const spurious of diagnostics.spuriousEntities) {
      const mention = trace.mentions.find((entry) => entry.name === spurious && entry.source === 'unknown');
      if (mention === undefined || mention.text.includes(' ')) continue;
      const key = nameKey(mention.text);
      add(
        { op: 'add', path: ['attributeTerms'], value: mention.text },
        'attributeTerm',
        example.id,
        () =>
          count((other) => other.diagnostics.spuriousEntities.includes(spurious)) -
          2 * count((other) => goldEntityKeys.get(other)!.has(key)) -
          0.5,
      );
    }
  }
}

/** Missed entities the noun policy excluded: drop the category, or accept uncountable nouns. */
export function excludedCategoryEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count } = generation;
  const { diagnostics, trace } = example;
  for (const goldName of diagnostics.missedEntities) {
    const key = nameKey(goldName);
    const mention = trace.mentions.find((entry) => entry.source === 'excluded' && nameKey(entry.text) === key);
    if (mention === undefined) continue;
    const category = nounCategory(mention.text) ?? (mention.head !== undefined ? nounCategory(mention.head) : null);
    if (category !== null && playbook.unknownNounPolicy.excludeCategories.includes(category)) {
      add(
        { op: 'remove', path: ['unknownNounPolicy', 'excludeCategories'], value: category },
        'nounCategory',
        example.id,
        () => count((other) => other.diagnostics.missedEntities.some((name) => categoryOfName(name) === category)),
      );
    }
    if (playbook.unknownNounPolicy.countableOnly) {
      add(
        { op: 'set', path: ['unknownNounPolicy', 'countableOnly'], value: false },
        'countability',
        example.id,
        () => 0,
      );
    }
  }
}
