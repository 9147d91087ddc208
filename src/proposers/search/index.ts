/** The search proposer for parameter artifacts (YAML/JSON): its space, sampler and proposer. */
export {
  createSearchProposer,
  SEARCH_PROPOSER_ID,
  describeParams,
  paramsOfDelta,
  type SearchProposerOptions,
} from './search-proposer.ts';
export {
  searchSpaceSchema,
  paramSchema,
  type SearchSpace,
  type ParamSpec,
  type Params,
  type ParamValue,
} from './space.ts';
export {
  suggest,
  splitTrials,
  DEFAULT_SAMPLER_SETTINGS,
  DEFAULT_STARTUP_TRIALS,
  DEFAULT_GAMMA,
  DEFAULT_EI_CANDIDATES,
  type SamplerSettings,
  type Trial,
} from './tpe.ts';
