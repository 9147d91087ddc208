/** The search proposer's defaults, written once (no imports: kloop.yaml's reader and `kloop config` load this file alone). */
/** Default startup trials (Optuna's `n_startup_trials` is 10; a kloop study has fewer evaluations to spend). */
export const DEFAULT_STARTUP_TRIALS = 6;
/** Default γ, hyperopt's 0.25. */
export const DEFAULT_GAMMA = 0.25;
/** Default draws from l(x) per parameter, Optuna's `n_ei_candidates`. */
export const DEFAULT_EI_CANDIDATES = 24;
