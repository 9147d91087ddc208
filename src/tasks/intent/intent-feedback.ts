/**
 * The intent task's feedback text: one example's diagnostics in words, for
 * proposers and users (what went wrong, not how much).
 *
 * The reflective proposer reads it (src/proposers/feedback-summary.ts). It says,
 * in words: the app type, the gold entities no prediction matched, the matched
 * entities whose role is wrong, the gold behaviours absent, the predicted
 * entities not in the gold, and (when asked) the gold relations missed.
 *
 * @module
 */
import type { ExampleDiagnostics } from './scorer.ts';

/** Options of {@link describeIntentDiagnostics}. */
export interface IntentFeedbackOptions {
  /** Also name the gold relations no predicted relation joins (when a study weighs `relationRecall`). Default false. */
  relations?: boolean;
  /** Most names listed per kind before "and N more". Default 8. */
  maxItems?: number;
}

function list(items: readonly string[], limit: number): string {
  if (items.length <= limit) return items.join(', ');
  return `${items.slice(0, limit).join(', ')} and ${items.length - limit} more`;
}

/**
 * The feedback sentence of one scored intent: its problems joined by `; `,
 * ending in a full stop; empty when nothing is wrong.
 *
 * @example
 * ```ts
 * describeIntentDiagnostics({
 *   appTypeMismatch: { expected: ['booking'], predicted: 'crm' },
 *   missedEntities: ['Therapist'], spuriousEntities: ['Clinic'],
 *   wrongRoles: [{ entity: 'TimeSlot', expected: 'resource', predicted: 'party' }],
 *   missingBehaviors: ['payment'], extraBehaviors: [], missedRelations: [], missingProjections: [],
 * });
 * // 'app type crm, expected booking; missed entities Therapist; wrong roles: TimeSlot is resource, not party;
 * //  missing behaviours payment; entities not in the gold: Clinic.'
 * ```
 */
export function describeIntentDiagnostics(
  diagnostics: ExampleDiagnostics,
  options: IntentFeedbackOptions = {},
): string {
  const limit = options.maxItems ?? 8;
  const parts: string[] = [];
  const mismatch = diagnostics.appTypeMismatch;
  if (mismatch !== undefined) parts.push(`app type ${mismatch.predicted}, expected ${mismatch.expected.join(' or ')}`);
  if (diagnostics.missedEntities.length > 0) parts.push(`missed entities ${list(diagnostics.missedEntities, limit)}`);
  if (diagnostics.wrongRoles.length > 0) {
    const roles = diagnostics.wrongRoles.map((wrong) => `${wrong.entity} is ${wrong.expected}, not ${wrong.predicted}`);
    parts.push(`wrong roles: ${list(roles, limit)}`);
  }
  if (diagnostics.missingBehaviors.length > 0)
    parts.push(`missing behaviours ${list(diagnostics.missingBehaviors, limit)}`);
  if (diagnostics.spuriousEntities.length > 0)
    parts.push(`entities not in the gold: ${list(diagnostics.spuriousEntities, limit)}`);
  if (options.relations === true && diagnostics.missedRelations.length > 0)
    parts.push(`missed relations ${list(diagnostics.missedRelations, limit)}`);
  return parts.length === 0 ? '' : `${parts.join('; ')}.`;
}
