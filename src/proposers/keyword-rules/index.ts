/**
 * The keyword-rules proposer: offline, error-driven edits of a routing-rules
 * artifact (keywords, exclusions, rule order, new rules), ranked by net fixes.
 *
 * @module
 */
export { KEYWORD_RULES_PROPOSER_ID, createKeywordRulesProposer, type KeywordRulesProposerOptions } from './keyword-rules-proposer.ts';
export {
  candidateTerms,
  evidenceOf,
  generateRoutingEdits,
  prefixTerm,
  screenRoutingEdits,
  type GenerateRoutingEditsOptions,
  type GeneratedEdit,
  type RoutingEvidence,
  type ScreenedEdit,
} from './edit-candidates.ts';
export { applyEditToRules, applyEditToText, describeEdit, referenceOf, resolveReference, type RoutingRuleEdit, type RuleReference } from './rules-edit.ts';
