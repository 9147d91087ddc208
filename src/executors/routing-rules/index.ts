/**
 * Routing rules: the artifact format (ordered keyword rules → a queue), the
 * router, and the `routing-rules` executor.
 *
 * @module
 */
export {
  MAX_ROUTING_RULES,
  MAX_TERMS_PER_LIST,
  ROUTING_RULES_FORMAT_VERSION,
  parseRoutingRules,
  routingQueues,
  safeParseRoutingRules,
  type RoutingRule,
  type RoutingRules,
  type RoutingRulesParseResult,
} from './routing-rules.ts';
export { prepareText, routeText, ruleMatches, termMatches, termWords, type PreparedText, type RouteResult } from './route-text.ts';
export { ROUTING_RULES_EXECUTOR_ID, createRoutingRulesExecutor } from './routing-rules-executor.ts';
