/**
 * Routing rules: the artifact format (ordered keyword rules → a queue, and
 * weighted terms for what no rule matches), the router, and the
 * `routing-rules` executor.
 *
 * @module
 */
export {
  MAX_ROUTING_RULES,
  MAX_ROUTING_SCORES,
  MAX_SCORE_WEIGHT,
  MAX_TERMS_PER_LIST,
  ROUTING_RULES_FORMAT_VERSION,
  parseRoutingRules,
  routingQueues,
  safeParseRoutingRules,
  type RoutingRule,
  type RoutingRules,
  type RoutingRulesParseResult,
  type RoutingScore,
} from './routing-rules.ts';
export {
  prepareText,
  routeText,
  ruleMatches,
  scoreText,
  termMatches,
  termWords,
  type PreparedText,
  type RouteResult,
} from './route-text.ts';
export { ROUTING_RULES_EXECUTOR_ID, createRoutingRulesExecutor } from './routing-rules-executor.ts';
