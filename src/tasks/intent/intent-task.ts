/**
 * The intent task (DESIGN §1) as a {@link Task}: a goal text in, an intent
 * out, scored by the seed's composite exactly as `scorer.ts` scores it.
 *
 *     composite = 0.25 × appType + 0.35 × entityRecall
 *               + 0.20 × roleAccuracy + 0.20 × behaviorCoverage
 *
 * - id `intent-scorer@1` (`SCORER_VERSION`): evaluator fingerprints of
 *   earlier runs do not change;
 * - input: the goal text; expected: a gold intent, possibly partial, with at
 *   least one scorable component; output: the public intent format
 *   (`intentSchema`);
 * - components, in report order, with default weights: `appType` 0.25,
 *   `entityRecall` 0.35, `roleAccuracy` 0.20, `behaviorCoverage` 0.20, and
 *   two a study may choose to weigh, default 0: `entityPrecision` (matched
 *   gold entities / predicted entities; 0 when nothing was predicted) and
 *   `relationRecall` (gold relations joined by a predicted relation / gold
 *   relations). A 0-weight component is left out of `components` and out of
 *   the composite, so with the defaults every composite is bit-for-bit the
 *   one `scoreIntent` gives (checked on the 72 examples of examples/intent);
 * - metrics beside the composite: `entityPrecision`, `relationRecall`,
 *   `projectionCoverage` (null when 0/0), as before;
 * - diagnostics: the `ExampleDiagnostics` of the scorer (missed and spurious
 *   entities, wrong roles, missing and extra behaviours, missed relations,
 *   missing projections, the app type mismatch); feedback: those in words
 *   ({@link describeIntentDiagnostics});
 * - admission: non-trivial gold and grounding ({@link intentAdmissionProblems});
 * - output contract: the LLM intent executor's (`OUTPUT_CONTRACT`), so its
 *   executor id does not change.
 *
 * Partial gold: a component whose gold is absent is skipped and the weights
 * are renormalised over the scored ones (`skipped` names them).
 *
 * @example
 * ```ts
 * const score = intentTask.score(predicted, gold, goal, defaultWeights(intentTask));
 * score.composite; // the same number as scoreIntent(gold, predicted).composite
 * ```
 *
 * @module
 */
import { z } from 'zod';
import type { Task, TaskComponent, TaskScore } from '../task.ts';
import { weightedComposite } from '../task.ts';
import { type ExpectedIntent, expectedIntentSchema, type Intent, intentSchema } from './intent.ts';
import { intentAdmissionProblems } from './intent-admission.ts';
import { describeIntentDiagnostics } from './intent-feedback.ts';
import { OUTPUT_CONTRACT } from './llm/output-contract.ts';
import { DEFAULT_WEIGHTS, SCORER_VERSION, scorableComponents, scoreIntent } from './scorer.ts';

/** Longest goal text, in characters (the corpus format's `MAX_GOAL_CHARACTERS`). */
const MAX_GOAL_CHARACTERS = 20_000;

/** The intent task's components, in report order, with their default weights. */
export const INTENT_COMPONENTS: readonly TaskComponent[] = Object.freeze([
  {
    name: 'appType',
    weight: DEFAULT_WEIGHTS.appType,
    description: '1 when the predicted app type is the gold type or a listed alternative, else 0',
  },
  {
    name: 'entityRecall',
    weight: DEFAULT_WEIGHTS.entityRecall,
    description: 'gold entities matched by name or alias / gold entities',
  },
  {
    name: 'roleAccuracy',
    weight: DEFAULT_WEIGHTS.roleAccuracy,
    description: 'matched entities with a gold role whose predicted role is right / those entities',
  },
  {
    name: 'behaviorCoverage',
    weight: DEFAULT_WEIGHTS.behaviorCoverage,
    description: 'gold behaviours predicted / gold behaviours',
  },
  {
    name: 'entityPrecision',
    weight: 0,
    description: 'matched gold entities / predicted entities (0 when none predicted); not in the seed composite',
  },
  {
    name: 'relationRecall',
    weight: 0,
    description: 'gold relations joined by a predicted relation / gold relations; not in the seed composite',
  },
]);

/** The diagnostic metrics reported beside the composite. */
export const INTENT_METRICS: readonly string[] = Object.freeze([
  'entityPrecision',
  'relationRecall',
  'projectionCoverage',
]);

/** Settings of {@link createIntentTask}. */
export interface IntentTaskOptions {
  /** Admission refuses gold without a known app type. Default true; false admits partial gold (`--partial-gold`). */
  requireAppType?: boolean;
}

const goalSchema = z.string().trim().min(1).max(MAX_GOAL_CHARACTERS);

/** A gold intent with at least one component to score (the scorer refuses one with none). */
const scorableExpectedSchema = expectedIntentSchema.refine(
  (expected) => scorableComponents(expected).length > 0,
  'the gold has nothing to score: give an appType, entities or behaviors',
);

function weightOf(weights: Readonly<Record<string, number>>, name: string): number {
  return weights[name] ?? 0;
}

/**
 * Creates the intent task.
 *
 * `score` throws nothing for an output that fits `intentSchema` and a gold
 * that fits `schemas.expected`. Weights are by component name; a name
 * missing from `weights` weighs 0 (pass the defaults merged with the
 * study's, as {@link defaultWeights} gives them).
 */
export function createIntentTask(options: IntentTaskOptions = {}): Task<string, ExpectedIntent, Intent> {
  const requireAppType = options.requireAppType ?? true;
  return {
    id: SCORER_VERSION,
    schemas: { input: goalSchema, expected: scorableExpectedSchema, output: intentSchema },
    components: INTENT_COMPONENTS,
    metrics: INTENT_METRICS,
    outcome: 'continuous',
    score(
      output: Intent,
      expected: ExpectedIntent,
      _goal: string,
      weights: Readonly<Record<string, number>>,
    ): TaskScore {
      // The composite scoreIntent computes with the seed's weights is not used:
      // the composite is recomputed below with the study's weights.
      const scored = scoreIntent(expected, output, DEFAULT_WEIGHTS);
      const components: Record<string, number> = { ...scored.components };
      const skipped: string[] = [...scored.skipped];
      if (weightOf(weights, 'entityPrecision') > 0) {
        if (scored.components.entityRecall !== undefined)
          components.entityPrecision = scored.metrics.entityPrecision ?? 0;
        else skipped.push('entityPrecision');
      }
      if (weightOf(weights, 'relationRecall') > 0) {
        if (scored.metrics.relationRecall !== null) components.relationRecall = scored.metrics.relationRecall;
        else skipped.push('relationRecall');
      }
      return {
        composite: weightedComposite(components, weights),
        components,
        skipped,
        metrics: { ...scored.metrics },
        diagnostics: { ...scored.diagnostics },
        feedback: describeIntentDiagnostics(scored.diagnostics, { relations: weightOf(weights, 'relationRecall') > 0 }),
      };
    },
    text: (goal: string) => goal,
    admit: (goal: string, expected: ExpectedIntent) => intentAdmissionProblems(goal, expected, { requireAppType }),
    outputContract: () => OUTPUT_CONTRACT,
  };
}

/** The intent task with its defaults (admission requires a known app type). */
export const intentTask: Task<string, ExpectedIntent, Intent> = createIntentTask();
