/**
 * Playbook edits of the extraction settings suggested by an example's entity
 * errors: the entity cap and salience floor, the compound policies, the
 * precision settings (cap, floor, excluded noun categories, countability)
 * and the layout reading. One function per error; each adds its edits through
 * the shared {@link EditGeneration} (src/tasks/intent/offline/edit-generation.ts).
 *
 * Pure.
 */
import type { ExampleEvidence } from './edit-evidence.ts';
import { categoryOfName, hiddenByLayout } from './edit-evidence.ts';
import type { EditGeneration } from './edit-generation.ts';
import { nameKey, termKey } from './extract.ts';
import { nounCategory } from './noun-senses.ts';

/** Entities the cap or the salience floor cut: raise the cap, lower the floor. */
export function cutEntityEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count } = generation;
  const { diagnostics, trace } = example;
  const cut = diagnostics.missedEntities.filter((goldName) => {
    const key = nameKey(goldName);
    return trace.candidates.some((candidate) => !candidate.kept && nameKey(candidate.name) === key);
  });
  if (cut.length > 0) {
    const extraction = playbook.extraction;
    const cutPrior = (): number =>
      count((other) =>
        other.diagnostics.missedEntities.some((name) =>
          other.trace.candidates.some((candidate) => !candidate.kept && nameKey(candidate.name) === nameKey(name)),
        ),
      );
    for (const step of [2, 4]) {
      const value = Math.min(60, extraction.maxEntities + step);
      if (value > extraction.maxEntities)
        add({ op: 'set', path: ['extraction', 'maxEntities'], value }, 'entityCap', example.id, cutPrior);
    }
    const floor = playbook.unknownNounPolicy.minSalience;
    if (extraction.rankBy === 'salience' && floor > 0) {
      add(
        { op: 'set', path: ['unknownNounPolicy', 'minSalience'], value: floor - 1 },
        'salienceFloor',
        example.id,
        cutPrior,
      );
    }
    if (extraction.rankBy !== 'salience')
      add({ op: 'set', path: ['extraction', 'rankBy'], value: 'salience' }, 'entityCap', example.id, cutPrior);
    // Salience beyond the cap: keep the most salient candidates past it.
    if (extraction.rankBy === 'salience') {
      const overflow = extraction.overflowSalience;
      for (const value of overflow === 0 ? [12, 10] : [overflow - 1, overflow - 2]) {
        if (value >= 4)
          add({ op: 'set', path: ['extraction', 'overflowSalience'], value }, 'entityCap', example.id, cutPrior);
      }
    }
  }
}

/** Missed entities read at the wrong length (a compound cut to its head, or kept whole): another compound policy. */
export function compoundPolicyEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count } = generation;
  const { diagnostics, trace } = example;
  for (const goldName of diagnostics.missedEntities) {
    const gold = example.expected.entities?.find((entity) => entity.name === goldName);
    if (gold === undefined) continue;
    const keys = [gold.name, ...(gold.aliases ?? [])].map((name) => nameKey(name));
    const heads = new Set(keys.map((key) => key.split(' ').pop()!));
    const misread = trace.mentions.some(
      (mention) =>
        mention.source === 'unknown' &&
        heads.has(mention.head ?? mention.text.split(' ').pop()!) &&
        !keys.includes(nameKey(mention.text)),
    );
    // A compound named at its playbook term ("purchase order" read as Order): another term-compound policy.
    const termMisread =
      keys.some((key) => key.includes(' ')) &&
      trace.mentions.some(
        (mention) =>
          mention.source === 'term' &&
          heads.has(nameKey(mention.text).split(' ').pop()!) &&
          !keys.includes(nameKey(mention.text)),
      );
    if (termMisread) {
      const termPrior = (): number =>
        count((other) =>
          other.diagnostics.missedEntities.some(
            (name) =>
              nameKey(name).includes(' ') &&
              other.trace.mentions.some(
                (mention) => mention.source === 'term' && nameKey(name).endsWith(` ${nameKey(mention.text)}`),
              ),
          ),
        );
      for (const policy of ['head', 'auto', 'full'] as const) {
        if (policy !== playbook.extraction.termCompounds)
          add(
            { op: 'set', path: ['extraction', 'termCompounds'], value: policy },
            'compoundPolicy',
            example.id,
            termPrior,
          );
      }
    }
    if (!misread) continue;
    const compoundPrior = (): number =>
      count((other) => other.diagnostics.missedEntities.some((name) => nameKey(name).includes(' ')));
    for (const policy of ['head', 'auto', 'full'] as const) {
      if (policy !== playbook.unknownNounPolicy.compounds)
        add(
          { op: 'set', path: ['unknownNounPolicy', 'compounds'], value: policy },
          'compoundPolicy',
          example.id,
          compoundPrior,
        );
    }
    for (const mention of trace.mentions) {
      if (mention.source !== 'attribute' || !keys.includes(nameKey(mention.text))) continue;
      if (playbook.attributeTerms.some((term) => termKey(term) === termKey(mention.text))) {
        add({ op: 'remove', path: ['attributeTerms'], value: mention.text }, 'attributeRemoval', example.id, () => 1);
      } else {
        add(
          { op: 'set', path: ['entityTerms', mention.text], value: gold.role ?? playbook.unknownNounPolicy.role },
          'attributeRemoval',
          example.id,
          () => 1,
        );
      }
    }
  }
}

/** Spurious entities when precision counts: a lower cap, a higher salience floor, the noun's category. */
export function precisionEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count, weighsPrecision } = generation;
  const { diagnostics, trace } = example;
  if (weighsPrecision && diagnostics.spuriousEntities.length > 0) {
    const extraction = playbook.extraction;
    const spuriousPrior = (): number =>
      count(
        (other) =>
          other.diagnostics.spuriousEntities.length > 0 && other.predictedEntityCount >= extraction.maxEntities - 1,
      ) - count((other) => other.diagnostics.missedEntities.length > 0);
    if (example.predictedEntityCount >= extraction.maxEntities && extraction.maxEntities > 1) {
      for (const step of [1, 2]) {
        const value = Math.max(1, extraction.maxEntities - step);
        add({ op: 'set', path: ['extraction', 'maxEntities'], value }, 'entityCap', example.id, spuriousPrior);
      }
    }
    if (extraction.rankBy === 'salience' && playbook.unknownNounPolicy.minSalience < 20) {
      add(
        { op: 'set', path: ['unknownNounPolicy', 'minSalience'], value: playbook.unknownNounPolicy.minSalience + 1 },
        'salienceFloor',
        example.id,
        spuriousPrior,
      );
    }
    const excluded = new Set(playbook.unknownNounPolicy.excludeCategories);
    for (const spurious of diagnostics.spuriousEntities) {
      const mention = trace.mentions.find((entry) => entry.name === spurious && entry.source === 'unknown');
      if (mention === undefined) continue;
      const category = nounCategory(mention.text) ?? (mention.head !== undefined ? nounCategory(mention.head) : null);
      if (category === null || excluded.has(category)) continue;
      add(
        { op: 'add', path: ['unknownNounPolicy', 'excludeCategories'], value: category },
        'nounCategory',
        example.id,
        () =>
          count((other) => other.diagnostics.spuriousEntities.some((name) => categoryOfName(name) === category)) -
          2 *
            count((other) =>
              (other.expected.entities ?? []).some((entity) => categoryOfName(entity.name) === category),
            ),
      );
    }
    if (!playbook.unknownNounPolicy.countableOnly) {
      add(
        { op: 'set', path: ['unknownNounPolicy', 'countableOnly'], value: true },
        'countability',
        example.id,
        () => 0,
      );
    }
  }
}

/** Missed entities the tagger's reading of the layout hides: a common noun whose only capital starts a sentence or a numbered item ("2. Supporters …"), or a noun read into the aside after it ("categories (brakes, …)"). The layout reading is a general rule: it is proposed once, ranked by net fixes. */
export function layoutEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count } = generation;
  if (!playbook.extraction.layoutCues && hiddenByLayout(example)) {
    add({ op: 'set', path: ['extraction', 'layoutCues'], value: true }, 'layout', example.id, () =>
      count(hiddenByLayout),
    );
  }
}
