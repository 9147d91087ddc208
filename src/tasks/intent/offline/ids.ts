/**
 * The implementation ids of the offline intent executor and of the
 * error-driven playbook proposer, part of the evaluator fingerprint and of
 * every experiment's record, and the proposer's default limits. In a module of their own, without the NLP
 * library their implementations import, so code that only needs the ids
 * (loading a study to read its notebook) does not pay for it.
 */

/** Implementation id of the offline playbook executor. Bump when extraction rules change. */
export const OFFLINE_EXECUTOR_ID = 'offline-playbook@7';

/** Implementation id of the error-driven playbook proposer. */
export const ERROR_DRIVEN_PROPOSER_ID = 'error-driven@1';

/** Default `maxEvaluations` of the error-driven playbook proposer (with local screening): candidate playbooks it scores per round. */
export const DEFAULT_ERROR_DRIVEN_MAX_EVALUATIONS = 60;

/** Default `maxScreened` of the error-driven playbook proposer: edits screened locally per round. */
export const DEFAULT_ERROR_DRIVEN_MAX_SCREENED = 1000;
