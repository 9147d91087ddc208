/**
 * Playbook edits of the cue lists suggested by an example's errors: app-type
 * cues and weights, behaviour cues and app-type defaults, relation readings,
 * relation phrases and cardinality cues, view (projection) cues. One function
 * per error; each adds its edits through the shared {@link EditGeneration}
 * (src/tasks/intent/offline/edit-generation.ts).
 *
 * Pure.
 */
import { acceptedAppTypes } from '../intent.ts';
import type { AppType, Behavior, Projection } from '../vocabulary.ts';
import type { ExampleEvidence } from './edit-evidence.ts';
import type { EditGeneration } from './edit-generation.ts';
import { nameKey, termKey } from './extract.ts';

/** Wrong app type: add a cue to the gold type, raise a matched gold cue, drop a misleading cue. */
export function appTypeEdits(generation: EditGeneration, example: ExampleEvidence, cueTerms: readonly string[]): void {
  const { playbook, add, count, contains, precise, top } = generation;
  const { diagnostics, trace } = example;
  if (diagnostics.appTypeMismatch !== undefined) {
    const gold = diagnostics.appTypeMismatch.expected[0] as AppType;
    const predicted = diagnostics.appTypeMismatch.predicted as AppType;
    const known = new Set((playbook.appTypeCues[gold] ?? []).map((cue) => termKey(cue.cue)));
    const isGold = (other: ExampleEvidence, type: string): boolean =>
      acceptedAppTypes(other.expected).includes(type as AppType);
    const cuePrior = (cue: string): number =>
      count((other) => isGold(other, gold) && other.diagnostics.appTypeMismatch !== undefined && contains(other, cue)) -
      count((other) => !isGold(other, gold) && other.diagnostics.appTypeMismatch === undefined && contains(other, cue));
    const goldCues = cueTerms.filter(
      (term) => !known.has(termKey(term)) && precise(term, (other) => isGold(other, gold)),
    );
    for (const cue of top(goldCues, cuePrior)) {
      add({ op: 'add', path: ['appTypeCues', gold], value: cue }, 'appTypeCue', example.id, () => cuePrior(cue));
    }
    for (const matched of trace.appTypeScores.find((entry) => entry.appType === gold)?.cues ?? []) {
      const current =
        (playbook.appTypeCues[gold] ?? []).find((cue) => termKey(cue.cue) === termKey(matched))?.weight ?? 1;
      add(
        { op: 'weight', path: ['appTypeCues', gold], value: matched, weight: current + 1 },
        'appTypeWeight',
        example.id,
        () => cuePrior(matched),
      );
    }
    for (const matched of trace.appTypeScores.find((entry) => entry.appType === predicted)?.cues ?? []) {
      add(
        { op: 'remove', path: ['appTypeCues', predicted], value: matched },
        'appTypeCueRemoval',
        example.id,
        () =>
          count((other) => other.diagnostics.appTypeMismatch?.predicted === predicted && contains(other, matched)) -
          count(
            (other) =>
              isGold(other, predicted) && other.diagnostics.appTypeMismatch === undefined && contains(other, matched),
          ),
      );
    }
  }
}

/** Missing behaviours: a cue from the goal, or a default of the predicted app type. */
export function behaviorEdits(generation: EditGeneration, example: ExampleEvidence, cueTerms: readonly string[]): void {
  const { playbook, add, count, contains, precise, top } = generation;
  const { diagnostics } = example;
  for (const behavior of diagnostics.missingBehaviors as Behavior[]) {
    const known = new Set((playbook.behaviorCues[behavior] ?? []).map((cue) => termKey(cue.cue)));
    const prior = (cue: string): number =>
      count((other) => other.diagnostics.missingBehaviors.includes(behavior) && contains(other, cue)) -
      0.25 * count((other) => !(other.expected.behaviors ?? []).includes(behavior) && contains(other, cue));
    const hasBehavior = (other: ExampleEvidence): boolean => (other.expected.behaviors ?? []).includes(behavior);
    const behaviorCues = cueTerms.filter((term) => !known.has(termKey(term)) && precise(term, hasBehavior));
    for (const cue of top(behaviorCues, prior)) {
      add({ op: 'add', path: ['behaviorCues', behavior], value: cue }, 'behaviorCue', example.id, () => prior(cue));
    }
    const type = example.predictedAppType as AppType;
    add(
      { op: 'add', path: ['appTypeDefaults', type, 'behaviors'], value: behavior },
      'appTypeDefault',
      example.id,
      () =>
        count((other) => other.predictedAppType === type && other.diagnostics.missingBehaviors.includes(behavior)) -
        0.5 *
          count(
            (other) =>
              other.predictedAppType === type &&
              (other.expected.behaviors ?? []).length > 0 &&
              !(other.expected.behaviors ?? []).includes(behavior),
          ),
    );
  }
}

/** Missed relations: the other structural readings (subtype patterns, pronoun subjects). */
export function relationReadingEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count } = generation;
  const { diagnostics } = example;
  if (diagnostics.missedRelations.length > 0) {
    const missedPrior = (): number => count((other) => other.diagnostics.missedRelations.length > 0) / 4;
    if (!playbook.extraction.subtypePatterns)
      add({ op: 'set', path: ['extraction', 'subtypePatterns'], value: true }, 'relationCue', example.id, missedPrior);
    if (!playbook.extraction.pronounSubjects)
      add({ op: 'set', path: ['extraction', 'pronounSubjects'], value: true }, 'relationCue', example.id, missedPrior);
  }

  // Missed relations with an end no reading relates: connect such entities to the model.
  if (!playbook.extraction.connectOrphans && diagnostics.missedRelations.length > 0) {
    add(
      { op: 'set', path: ['extraction', 'connectOrphans'], value: true },
      'relationCue',
      example.id,
      () => count((other) => other.diagnostics.missedRelations.length > 0) / 4,
    );
  }
}

/** Missed relations: the words between the two nouns in one sentence become a relation phrase. */
export function relationPhraseEdits(generation: EditGeneration, example: ExampleEvidence): void {
  const { playbook, add, count, contains, weighsRelations } = generation;
  const { diagnostics, trace } = example;
  for (const missed of diagnostics.missedRelations) {
    const [fromName, toName] = missed.split(' -> ');
    if (fromName === undefined || toName === undefined) continue;
    const gold = example.expected.relations?.find((relation) => relation.from === fromName && relation.to === toName);
    const fromKey = nameKey(fromName);
    const toKey = nameKey(toName);
    const words = example.analysis.words;
    for (const left of trace.mentions) {
      const leftKey = nameKey(left.name === '' ? left.text : left.name);
      if (leftKey !== fromKey && leftKey !== toKey) continue;
      const right = trace.mentions.find(
        (mention) =>
          mention.start >= left.end &&
          mention.start - left.end <= 4 &&
          words[mention.start]!.sentence === words[left.start]!.sentence &&
          nameKey(mention.name === '' ? mention.text : mention.name) === (leftKey === fromKey ? toKey : fromKey),
      );
      if (right === undefined) continue;
      const between = words
        .slice(left.end, right.start)
        .filter((word) => word.wordClass === 'verb' || word.wordClass === 'preposition' || word.wordClass === 'copula');
      if (between.length === 0 || between.length > 3) continue;
      const phrase = between.map((word) => word.lemma).join(' ');
      if (
        !/^[a-z][a-z' -]*[a-z]$/.test(phrase) ||
        Object.keys(playbook.relationCues).some((cue) => termKey(cue) === termKey(phrase))
      )
        continue;
      const reverse = leftKey === toKey;
      const rule: Record<string, string | boolean> = { kind: gold?.kind ?? 'association' };
      if (reverse) rule.reverse = true;
      add(
        { op: 'set', path: ['relationCues', phrase], value: rule },
        'relationCue',
        example.id,
        () =>
          count((other) => other.diagnostics.missedRelations.length > 0 && contains(other, phrase)) -
          0.25 * count((other) => (other.expected.relations ?? []).length === 0 && contains(other, phrase)),
      );
      // The quantifier before the object noun, when the playbook does not know it.
      const quantifier = words[right.start - 1];
      if (
        quantifier !== undefined &&
        (quantifier.wordClass === 'determiner' || quantifier.wordClass === 'adjective') &&
        playbook.cardinalityCues[quantifier.lemma] === undefined &&
        gold?.cardinality !== undefined
      ) {
        const many = reverse ? gold.cardinality.startsWith('many') : gold.cardinality.endsWith('many');
        add(
          { op: 'set', path: ['cardinalityCues', quantifier.lemma], value: many ? 'many' : 'one' },
          'cardinalityCue',
          example.id,
          () => (weighsRelations ? 0 : -1),
        );
      }
    }
  }
}

/** Missing projections: not in the composite, so these rank last. */
export function projectionEdits(
  generation: EditGeneration,
  example: ExampleEvidence,
  cueTerms: readonly string[],
): void {
  const { playbook, add, count, contains, precise, top } = generation;
  const { diagnostics } = example;
  for (const projection of diagnostics.missingProjections as Projection[]) {
    const known = new Set((playbook.projectionCues[projection] ?? []).map((cue) => termKey(cue.cue)));
    const prior = (cue: string): number =>
      count((other) => other.diagnostics.missingProjections.includes(projection) && contains(other, cue)) - 1000;
    const hasProjection = (other: ExampleEvidence): boolean => (other.expected.projections ?? []).includes(projection);
    const projectionCues = cueTerms.filter((term) => !known.has(termKey(term)) && precise(term, hasProjection));
    for (const cue of top(projectionCues, prior).slice(0, 3)) {
      add({ op: 'add', path: ['projectionCues', projection], value: cue }, 'projection', example.id, () => prior(cue));
    }
  }
}
