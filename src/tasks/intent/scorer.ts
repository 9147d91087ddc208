/**
 * The intent scorer: the seed's composite, exactly.
 *
 *     composite = 0.25 × appType accuracy + 0.35 × entity recall
 *               + 0.20 × role accuracy   + 0.20 × behavior coverage
 *
 * - appType accuracy: 1 when the predicted type is the gold type or one of its
 *   listed alternatives, else 0.
 * - entity recall: matched gold entities / gold entities. A gold entity matches
 *   a predicted one (one-to-one) when their normalised names are equal
 *   (`normalizeEntityName`) or the prediction equals a gold alias.
 * - role accuracy: among matched entities that have a gold role, the share whose
 *   predicted role is right; 0 when the gold has roles but none was matched.
 * - behavior coverage: gold behaviours found / gold behaviours.
 *
 * Partial gold: a component whose gold is absent (or an empty list) is skipped
 * and the remaining weights are renormalised to sum to 1. Invalid executor
 * outputs are never scored (see `ExampleScore`).
 *
 * Source: "The Karpathy Loop, Three Months Later" (the seed document), and
 * DESIGN.md §1.
 */
import type { ExampleScore } from '../example-score.ts';
import type { ExecutionResult } from '../../executors/executor.ts';
import type { ExpectedIntent, Intent } from './intent.ts';
import { acceptedAppTypes, intentSchema } from './intent.ts';
import { describeIntentDiagnostics } from './intent-feedback.ts';
import { normalizeEntityName } from './names.ts';

/** Component names of the intent composite (the seed's four), in report order. */
export const COMPONENTS = ['appType', 'entityRecall', 'roleAccuracy', 'behaviorCoverage'] as const;
export type ComponentName = (typeof COMPONENTS)[number];

/** The intent scorer's component scores in [0, 1]; a missing key means the component was skipped. */
export type ComponentScores = Partial<Record<ComponentName, number>>;

/** The intent task's per-example diagnostics (an example record's `diagnostics`): what the proposer and the user read. */
export type ExampleDiagnostics = {
  /** Gold app types (primary first) and the predicted one, when they disagree. */
  appTypeMismatch?: { expected: string[]; predicted: string };
  /** Gold entity names that no predicted entity matched. */
  missedEntities: string[];
  /** Predicted entity names that match no gold entity. */
  spuriousEntities: string[];
  /** Matched entities whose role is wrong. */
  wrongRoles: Array<{ entity: string; expected: string; predicted: string }>;
  /** Gold behaviours absent from the prediction. */
  missingBehaviors: string[];
  /** Predicted behaviours not in the gold. */
  extraBehaviors: string[];
  /** Gold relations (as "from -> to") with no predicted relation between the same entities. */
  missedRelations: string[];
  /** Gold projections absent from the prediction. */
  missingProjections: string[];
};

/** The intent task's diagnostic metrics, reported beside the composite, not in it. Null when undefined (0/0). */
export type DiagnosticMetrics = {
  entityPrecision: number | null;
  relationRecall: number | null;
  projectionCoverage: number | null;
};

/** The intent score of one valid prediction (the example record of an intent study, without `feedback`). */
export interface IntentScore {
  valid: true;
  /** Weighted mean of the scored components, renormalised over them; in [0, 1]. */
  composite: number;
  components: ComponentScores;
  /** Components skipped because the gold lacks them. */
  skipped: ComponentName[];
  metrics: DiagnosticMetrics;
  diagnostics: ExampleDiagnostics;
}

/** Weights of the composite components. */
export type ComponentWeights = Record<ComponentName, number>;

/** The seed's weights: 0.25, 0.35, 0.20, 0.20. */
export const DEFAULT_WEIGHTS: Readonly<ComponentWeights> = Object.freeze({
  appType: 0.25,
  entityRecall: 0.35,
  roleAccuracy: 0.2,
  behaviorCoverage: 0.2,
});

/** Version of the scoring rules; part of the evaluator fingerprint. */
export const SCORER_VERSION = 'intent-scorer@1';

/** Which components a gold expectation lets us score. */
export function scorableComponents(expected: ExpectedIntent): ComponentName[] {
  const present: ComponentName[] = [];
  if (acceptedAppTypes(expected).length > 0) present.push('appType');
  if (expected.entities !== undefined && expected.entities.length > 0) {
    present.push('entityRecall');
    if (expected.entities.some((entity) => entity.role !== undefined)) present.push('roleAccuracy');
  }
  if (expected.behaviors !== undefined && expected.behaviors.length > 0) present.push('behaviorCoverage');
  return present;
}

/**
 * Scores one executor result against its gold expectation, as an intent
 * study's evaluator records it (with the feedback text).
 *
 * @param expected gold intent (possibly partial)
 * @param result executor result (src/executors/executor.ts); `{ ok: false }`,
 *   or an output that does not fit `intentSchema` (`schema`), yields an invalid score
 * @param weights component weights (default: the seed's); only ratios matter
 * @throws Error when the gold has no scorable component (the corpus loader refuses such examples)
 */
export function scoreExample(
  expected: ExpectedIntent,
  result: ExecutionResult,
  weights: Readonly<ComponentWeights> = DEFAULT_WEIGHTS,
): ExampleScore {
  if (!result.ok) {
    return {
      valid: false,
      invalidReason: result.reason,
      message: result.message,
      ...(result.raw !== undefined ? { raw: result.raw } : {}),
    };
  }
  const parsed = intentSchema.safeParse(result.output);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    return {
      valid: false,
      invalidReason: 'schema',
      message: `the output does not fit the intent schema: ${issues.join('; ')}`,
      ...(result.raw !== undefined ? { raw: result.raw } : {}),
    };
  }
  const scored = scoreIntent(expected, parsed.data, weights);
  return {
    ...scored,
    components: scored.components as Record<string, number>,
    feedback: describeIntentDiagnostics(scored.diagnostics),
  };
}

/** Scores a valid predicted intent against its gold expectation. See {@link scoreExample}. */
export function scoreIntent(
  expected: ExpectedIntent,
  predicted: Intent,
  weights: Readonly<ComponentWeights> = DEFAULT_WEIGHTS,
): IntentScore {
  const present = scorableComponents(expected);
  if (present.length === 0) throw new Error('the gold expectation has no scorable component');
  const components: ComponentScores = {};
  const diagnostics: ExampleDiagnostics = {
    missedEntities: [],
    spuriousEntities: [],
    wrongRoles: [],
    missingBehaviors: [],
    extraBehaviors: [],
    missedRelations: [],
    missingProjections: [],
  };

  const goldTypes = acceptedAppTypes(expected);
  if (goldTypes.length > 0) {
    const right = goldTypes.includes(predicted.appType);
    components.appType = right ? 1 : 0;
    if (!right) diagnostics.appTypeMismatch = { expected: goldTypes, predicted: predicted.appType };
  }

  const goldEntities = expected.entities ?? [];
  const { predictedKeys, goldToPredicted } = matchEntities(goldEntities, predicted, diagnostics);
  if (present.includes('entityRecall')) {
    components.entityRecall = goldToPredicted.size / goldEntities.length;
  }
  if (present.includes('roleAccuracy')) {
    let withRole = 0;
    let right = 0;
    for (const [goldIndex, predictedIndex] of goldToPredicted) {
      const gold = goldEntities[goldIndex]!;
      if (gold.role === undefined) continue;
      withRole += 1;
      const predictedRole = predicted.entities[predictedIndex]!.role;
      if (predictedRole === gold.role) right += 1;
      else diagnostics.wrongRoles.push({ entity: gold.name, expected: gold.role, predicted: predictedRole });
    }
    components.roleAccuracy = withRole === 0 ? 0 : right / withRole;
  }

  const goldBehaviors = new Set(expected.behaviors ?? []);
  const predictedBehaviors = new Set(predicted.behaviors);
  for (const behavior of goldBehaviors)
    if (!predictedBehaviors.has(behavior)) diagnostics.missingBehaviors.push(behavior);
  for (const behavior of predictedBehaviors)
    if (!goldBehaviors.has(behavior)) diagnostics.extraBehaviors.push(behavior);
  if (present.includes('behaviorCoverage')) {
    components.behaviorCoverage = (goldBehaviors.size - diagnostics.missingBehaviors.length) / goldBehaviors.size;
  }

  const relationRecall = relationRecallOf(expected, predicted, predictedKeys, goldToPredicted, diagnostics);

  const projectionCoverage = projectionCoverageOf(expected, predicted, diagnostics);

  let weighted = 0;
  let totalWeight = 0;
  for (const name of present) {
    weighted += weights[name] * components[name]!;
    totalWeight += weights[name];
  }
  const composite = totalWeight > 0 ? weighted / totalWeight : 0;
  return {
    valid: true,
    composite,
    components,
    skipped: COMPONENTS.filter((name) => !present.includes(name)),
    metrics: {
      entityPrecision: predicted.entities.length === 0 ? null : goldToPredicted.size / predicted.entities.length,
      relationRecall,
      projectionCoverage,
    },
    diagnostics,
  };
}

/** Matches gold entities to predicted ones: one-to-one, gold order, by normalised name or alias; records misses and spurious entities. */
function matchEntities(
  goldEntities: NonNullable<ExpectedIntent['entities']>,
  predicted: Intent,
  diagnostics: ExampleDiagnostics,
): { predictedKeys: string[]; goldToPredicted: Map<number, number> } {
  const predictedKeys = predicted.entities.map((entity) => normalizeEntityName(entity.name));
  const used = new Set<number>();
  const goldToPredicted = new Map<number, number>();
  goldEntities.forEach((gold, goldIndex) => {
    const keys = new Set([gold.name, ...(gold.aliases ?? [])].map(normalizeEntityName));
    const found = predictedKeys.findIndex((key, index) => !used.has(index) && keys.has(key));
    if (found >= 0) {
      used.add(found);
      goldToPredicted.set(goldIndex, found);
    } else {
      diagnostics.missedEntities.push(gold.name);
    }
  });
  predicted.entities.forEach((entity, index) => {
    if (!used.has(index)) diagnostics.spuriousEntities.push(entity.name);
  });
  return { predictedKeys, goldToPredicted };
}

/**
 * Relation recall, or null without gold relations: a gold relation is
 * recalled when a predicted relation joins the same two (matched) entities,
 * in either direction; records the missed ones.
 */
function relationRecallOf(
  expected: ExpectedIntent,
  predicted: Intent,
  predictedKeys: readonly string[],
  goldToPredicted: ReadonlyMap<number, number>,
  diagnostics: ExampleDiagnostics,
): number | null {
  const goldRelations = expected.relations ?? [];
  if (goldRelations.length === 0) return null;
  const goldEntities = expected.entities ?? [];
  const pairs = new Set(
    predicted.relations.map((relation) =>
      pairKey(normalizeEntityName(relation.from), normalizeEntityName(relation.to)),
    ),
  );
  const canonical = (name: string): string => {
    const key = normalizeEntityName(name);
    const goldIndex = goldEntities.findIndex((gold) =>
      [gold.name, ...(gold.aliases ?? [])].some((alias) => normalizeEntityName(alias) === key),
    );
    const predictedIndex = goldIndex >= 0 ? goldToPredicted.get(goldIndex) : undefined;
    return predictedIndex !== undefined ? predictedKeys[predictedIndex]! : key;
  };
  let recalled = 0;
  for (const relation of goldRelations) {
    if (pairs.has(pairKey(canonical(relation.from), canonical(relation.to)))) recalled += 1;
    else diagnostics.missedRelations.push(`${relation.from} -> ${relation.to}`);
  }
  return recalled / goldRelations.length;
}

/** Share of the distinct gold projections predicted, or null without gold projections; records the missing ones. */
function projectionCoverageOf(
  expected: ExpectedIntent,
  predicted: Intent,
  diagnostics: ExampleDiagnostics,
): number | null {
  const goldProjections = expected.projections ?? [];
  if (goldProjections.length === 0) return null;
  const predictedProjections = new Set(predicted.projections);
  for (const projection of new Set(goldProjections)) {
    if (!predictedProjections.has(projection)) diagnostics.missingProjections.push(projection);
  }
  const unique = new Set(goldProjections).size;
  return (unique - diagnostics.missingProjections.length) / unique;
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
}
