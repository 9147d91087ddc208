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
import type { EditCandidate, ExampleEvidence } from './edit-evidence.ts';
import type { Playbook } from './playbook.ts';
import { candidateCueTerms } from './edit-evidence.ts';
import type { GenerateOptions } from './edit-generation.ts';
import { createEditGeneration, isCrowded } from './edit-generation.ts';
import {
  attributeTermEdits,
  excludedCategoryEdits,
  missedEntityEdits,
  roleEdits,
  spuriousEntityEdits,
} from './entity-edits.ts';
import { compoundPolicyEdits, cutEntityEdits, layoutEdits, precisionEdits } from './extraction-edits.ts';
import {
  appTypeEdits,
  behaviorEdits,
  projectionEdits,
  relationPhraseEdits,
  relationReadingEdits,
} from './cue-edits.ts';
import { learnedLexiconBundles } from './lexicon-bundles.ts';

export { candidateCueTerms, type EditCandidate, type EditKind, type ExampleEvidence } from './edit-evidence.ts';
export type { GenerateOptions } from './edit-generation.ts';
export {
  BUNDLE_DUPLICATE_SIMILARITY,
  LEXICON_MIN_SUPPORT,
  isNearDuplicateBundle,
  learnedLexiconBundles,
  lexiconBundleTerms,
} from './lexicon-bundles.ts';
export { editMayAffect } from './edit-scope.ts';

/**
 * Generates single-edit candidates from the diagnostics of the optimization
 * examples. Deterministic; sorted by (preRank desc, support desc, delta).
 */
export function generateEditCandidates(
  playbook: Playbook,
  examples: readonly ExampleEvidence[],
  options: GenerateOptions = {},
): EditCandidate[] {
  const generation = createEditGeneration(playbook, examples, options);
  for (const example of examples) {
    const cueTerms = candidateCueTerms(example.analysis);
    const crowded = isCrowded(generation, example);
    appTypeEdits(generation, example, cueTerms);
    missedEntityEdits(generation, example);
    spuriousEntityEdits(generation, example, crowded);
    roleEdits(generation, example);
    behaviorEdits(generation, example, cueTerms);
    cutEntityEdits(generation, example);
    compoundPolicyEdits(generation, example);
    attributeTermEdits(generation, example, crowded);
    precisionEdits(generation, example);
    excludedCategoryEdits(generation, example);
    layoutEdits(generation, example);
    relationReadingEdits(generation, example);
    relationPhraseEdits(generation, example);
    projectionEdits(generation, example, cueTerms);
  }
  const { candidates } = generation;
  for (const bundle of learnedLexiconBundles(playbook, examples)) {
    candidates.set(bundle.delta, bundle);
  }
  return [...candidates.values()].sort(
    (a, b) =>
      b.preRank - a.preRank || b.sources.size - a.sources.size || (a.delta < b.delta ? -1 : a.delta > b.delta ? 1 : 0),
  );
}
