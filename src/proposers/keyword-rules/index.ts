/**
 * The keyword-rules proposer: offline, error-driven edits of a routing-rules
 * artifact (keywords, exclusions, rule order, new rules, learned scores),
 * ranked by net fixes.
 *
 * @module
 */
export {
  BUNDLE_BARS,
  KEYWORD_RULES_PROPOSER_ID,
  createKeywordRulesProposer,
  type KeywordRulesProposerOptions,
} from './keyword-rules-proposer.ts';
export {
  candidateTerms,
  evidenceOf,
  examplesMatching,
  generateRoutingEdits,
  prefixTerm,
  screenRoutingEdits,
  type GenerateRoutingEditsOptions,
  type GeneratedEdit,
  type RoutingEvidence,
  type ScreenedEdit,
} from './edit-candidates.ts';
export {
  applyEditToRules,
  applyEditToText,
  applyEditsToText,
  describeEdit,
  referenceOf,
  resolveReference,
  type RoutingRuleEdit,
  type RuleReference,
} from './rules-edit.ts';
export {
  SCORE_FOLDS,
  SCORE_SETTINGS_GRID,
  chooseScores,
  indexTerms,
  learnScores,
  type ChosenScores,
  type HeldOutOutcome,
  type ScoreLearningSettings,
  type TermIndex,
} from './learn-scores.ts';
export {
  buildVocabularyBundle,
  compareByGenerality,
  generalityOf,
  type BundleBars,
  type EditGenerality,
  type RankedEdit,
  type VocabularyBundle,
} from './vocabulary-bundles.ts';
