/**
 * Candidate playbook edits generated from failures, in the tradition of
 * transformation-based learning (Brill 1995, "Transformation-based
 * error-driven learning and natural language processing"): every error on a
 * training example suggests small rule changes that would fix it; each change
 * gets a cheap prior (`preRank`: examples it plausibly fixes minus examples it
 * plausibly breaks) so the expensive evaluation is spent on the likeliest.
 *
 * Pure: reads the incumbent playbook, the goal analyses, the extraction
 * traces and the scorer's diagnostics; evaluates nothing.
 */
import { acceptedAppTypes } from '../intent.ts';
import type { AppType, Behavior, EntityRole, Projection } from '../vocabulary.ts';
import type { EditCandidate, EditKind, ExampleEvidence } from './edit-evidence.ts';
import { candidateCueTerms, categoryOfName, goldKeys, hiddenByLayout } from './edit-evidence.ts';
import { nameKey, termKey } from './extract.ts';
import { learnedLexiconBundles } from './lexicon-bundles.ts';
import type { Playbook } from './playbook.ts';
import type { PlaybookEdit } from './playbook-edit.ts';
import { describePlaybookEdit } from './playbook-edit.ts';
import { nounCategory } from './noun-senses.ts';

export { candidateCueTerms, type EditCandidate, type EditKind, type ExampleEvidence } from './edit-evidence.ts';
export {
  BUNDLE_DUPLICATE_SIMILARITY,
  LEXICON_MIN_SUPPORT,
  isNearDuplicateBundle,
  learnedLexiconBundles,
  lexiconBundleTerms,
} from './lexicon-bundles.ts';
export { editMayAffect } from './edit-scope.ts';

export interface GenerateOptions {
  /** Most cue or alias suggestions drawn from one error of one example. Default 12. */
  maxSuggestionsPerError?: number;
  /**
   * A new app-type, behaviour or view cue must be right this often: among the
   * examples whose goal contains it, the share whose gold has the cue's value.
   * Default 0.5.
   */
  minCuePrecision?: number;
  /**
   * A new cue's precision must also be this many times the value's base rate
   * (its share of all examples): association-rule lift, which keeps common
   * words out of the cue lists of common behaviours. Default 1.5.
   */
  minCueLift?: number;
  /**
   * The study weighs entity precision: every spurious entity suggests edits
   * (a stop word, an attribute term, a lower cap, a higher salience floor, its
   * noun category), not only those that crowd gold entities out of the cap. Default false.
   */
  precision?: boolean;
  /** The study weighs relation recall: quantifier cues rank like relation phrases. Default false. */
  relations?: boolean;
}

/**
 * Generates single-edit candidates from the diagnostics of the optimization
 * examples. Deterministic; sorted by (preRank desc, support desc, delta).
 */
export function generateEditCandidates(
  playbook: Playbook,
  examples: readonly ExampleEvidence[],
  options: GenerateOptions = {},
): EditCandidate[] {
  const perError = options.maxSuggestionsPerError ?? 12;
  const minPrecision = options.minCuePrecision ?? 0.5;
  const minLift = options.minCueLift ?? 1.5;
  const weighsPrecision = options.precision ?? false;
  const weighsRelations = options.relations ?? false;
  const candidates = new Map<string, EditCandidate>();
  const add = (edit: PlaybookEdit, kind: EditKind, source: string, preRank: () => number): void => {
    const delta = describePlaybookEdit(edit);
    const existing = candidates.get(delta);
    if (existing !== undefined) {
      existing.sources.add(source);
      return;
    }
    candidates.set(delta, { edit, delta, kind, sources: new Set([source]), preRank: preRank() });
  };
  const contains = (example: ExampleEvidence, phrase: string): boolean =>
    phrase.split(' ').every((word) => example.analysis.keySet.has(word));
  const count = (predicate: (example: ExampleEvidence) => boolean): number => examples.filter(predicate).length;
  const goldEntityKeys = new Map(examples.map((example) => [example, goldKeys(example.expected)]));
  /** Share of the examples containing `cue` whose gold has the value (1 when none contains it). */
  const containingCache = new Map<string, ExampleEvidence[]>();
  const containing = (cue: string): ExampleEvidence[] => {
    let found = containingCache.get(cue);
    if (found === undefined) {
      found = examples.filter((example) => contains(example, cue));
      containingCache.set(cue, found);
    }
    return found;
  };
  const precise = (cue: string, hasValue: (example: ExampleEvidence) => boolean): boolean => {
    const found = containing(cue);
    if (found.length === 0) return true;
    const precision = found.filter(hasValue).length / found.length;
    const baseRate = examples.filter(hasValue).length / examples.length;
    return precision >= minPrecision && precision >= Math.min(1, baseRate * minLift);
  };
  const top = <T>(items: T[], score: (item: T) => number): T[] =>
    items
      .map((item) => ({ item, value: score(item) }))
      .sort((a, b) => b.value - a.value)
      .slice(0, perError)
      .map((entry) => entry.item);

  for (const example of examples) {
    const { diagnostics, trace } = example;
    const cueTerms = candidateCueTerms(example.analysis);

    // Wrong app type: add a cue to the gold type, raise a matched gold cue, drop a misleading cue.
    if (diagnostics.appTypeMismatch !== undefined) {
      const gold = diagnostics.appTypeMismatch.expected[0] as AppType;
      const predicted = diagnostics.appTypeMismatch.predicted as AppType;
      const known = new Set((playbook.appTypeCues[gold] ?? []).map((cue) => termKey(cue.cue)));
      const isGold = (other: ExampleEvidence, type: string): boolean =>
        acceptedAppTypes(other.expected).includes(type as AppType);
      const cuePrior = (cue: string): number =>
        count(
          (other) => isGold(other, gold) && other.diagnostics.appTypeMismatch !== undefined && contains(other, cue),
        ) -
        count(
          (other) => !isGold(other, gold) && other.diagnostics.appTypeMismatch === undefined && contains(other, cue),
        );
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

    // Missed entities: make the word known, stop stopping it, or alias another noun to it.
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
            add({ op: 'set', path: ['entityTerms', key], value: role }, 'entityTerm', example.id, () =>
              missedPrior(key),
            );
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

    // Spurious entities: only matter when they crowd gold entities out of the entity cap.
    const crowded =
      weighsPrecision ||
      (diagnostics.missedEntities.length > 0 && example.predictedEntityCount >= playbook.extraction.maxEntities);
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

    // Wrong roles: set the term's role; for unknown nouns also try a suffix rule.
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

    // Missing behaviours: a cue from the goal, or a default of the predicted app type.
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

    // Entities the cap or the salience floor cut: raise the cap, lower the floor.
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

    // Missed entities read at the wrong length (a compound cut to its head, or kept whole): another compound policy.
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

    // Spurious entities that crowd the cap may be attributes of a record ("name", "date").
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

    // Spurious entities when precision counts: a lower cap, a higher salience floor, the noun's category.
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

    // Missed entities the noun policy excluded: drop the category, or accept uncountable nouns.
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

    // Missed entities the tagger's reading of the layout hides: a common noun whose only capital
    // starts a sentence or a numbered item ("2. Supporters …"), or a noun read into the aside after it
    // ("categories (brakes, …)"). The layout reading is a general rule: it is proposed once, ranked by net fixes.
    if (!playbook.extraction.layoutCues && hiddenByLayout(example)) {
      add({ op: 'set', path: ['extraction', 'layoutCues'], value: true }, 'layout', example.id, () =>
        count(hiddenByLayout),
      );
    }

    // Missed relations: the other structural readings (subtype patterns, pronoun subjects).
    if (diagnostics.missedRelations.length > 0) {
      const missedPrior = (): number => count((other) => other.diagnostics.missedRelations.length > 0) / 4;
      if (!playbook.extraction.subtypePatterns)
        add(
          { op: 'set', path: ['extraction', 'subtypePatterns'], value: true },
          'relationCue',
          example.id,
          missedPrior,
        );
      if (!playbook.extraction.pronounSubjects)
        add(
          { op: 'set', path: ['extraction', 'pronounSubjects'], value: true },
          'relationCue',
          example.id,
          missedPrior,
        );
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

    // Missed relations: the words between the two nouns in one sentence become a relation phrase.
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
          .filter(
            (word) => word.wordClass === 'verb' || word.wordClass === 'preposition' || word.wordClass === 'copula',
          );
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

    // Missing projections: not in the composite, so these rank last.
    for (const projection of diagnostics.missingProjections as Projection[]) {
      const known = new Set((playbook.projectionCues[projection] ?? []).map((cue) => termKey(cue.cue)));
      const prior = (cue: string): number =>
        count((other) => other.diagnostics.missingProjections.includes(projection) && contains(other, cue)) - 1000;
      const hasProjection = (other: ExampleEvidence): boolean =>
        (other.expected.projections ?? []).includes(projection);
      const projectionCues = cueTerms.filter((term) => !known.has(termKey(term)) && precise(term, hasProjection));
      for (const cue of top(projectionCues, prior).slice(0, 3)) {
        add({ op: 'add', path: ['projectionCues', projection], value: cue }, 'projection', example.id, () =>
          prior(cue),
        );
      }
    }
  }
  for (const bundle of learnedLexiconBundles(playbook, examples)) {
    candidates.set(bundle.delta, bundle);
  }
  return [...candidates.values()].sort(
    (a, b) =>
      b.preRank - a.preRank || b.sources.size - a.sources.size || (a.delta < b.delta ? -1 : a.delta > b.delta ? 1 : 0),
  );
}
