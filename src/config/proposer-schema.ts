/** `proposer:` of `kloop.yaml` (src/config/config.ts): which proposer writes candidates, and its settings. */
import { z } from 'zod';
import { searchSpaceSchema } from './search-space-schema.ts';
import { count } from './schema-numbers.ts';
import { DEFAULT_CANDIDATES_PER_ROUND, DEFAULT_PROPOSER_CONCURRENCY } from './study-defaults.ts';

/** The proposer kinds: `error-driven` (offline, transformation-based learning), `reflective` (an LLM) or `search` (parameter search, docs/search.md). */
export const PROPOSER_KINDS = ['error-driven', 'reflective', 'search'] as const;

/** The keys of `proposer:` that only the search proposer reads. */
const SEARCH_ONLY = ['space', 'startupTrials', 'gamma', 'tpe'] as const;

/** The keys of `proposer:` that only the error-driven proposer reads. */
const ERROR_DRIVEN_ONLY = ['maxEvaluations', 'maxScreened'] as const;

export const proposerSchema = z
  .strictObject({
    /** `error-driven` (offline, transformation-based learning) or `reflective` (LLM). Default `error-driven`. */
    kind: z.enum(PROPOSER_KINDS).default('error-driven'),
    /** Candidates proposed per round. Default 6. */
    candidatesPerRound: count(1).default(DEFAULT_CANDIDATES_PER_ROUND),
    /**
     * Candidates evaluated at once (each on its optimization and anchor
     * partitions). Not the number of model requests in flight: that is
     * `providers.<name>.maxInFlight`. Default 4.
     */
    concurrency: count(1).default(DEFAULT_PROPOSER_CONCURRENCY),
    /** Reflective proposer only: its model, `provider:model`; default the executor's model. */
    model: z.string().trim().min(1).optional(),
    /**
     * Reflective proposer only: the base URL of its model's server (an
     * OpenAI-compatible server, Ollama, a gateway). Default: the executor's
     * when both are on one provider, else the provider's variable
     * (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `OLLAMA_HOST`), else its
     * default server. `--base-url` and `--proposer-base-url` replace it.
     */
    baseURL: z.url().optional(),
    /** Reflective proposer only: the NAME of the environment variable holding its key. Default: the executor's on one provider, else the provider's (`OPENAI_API_KEY`, ...). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'give the NAME of an environment variable holding the key, not the key itself')
      .optional(),
    /**
     * Error-driven proposer only: most candidate artifacts it scores itself on
     * the optimization partition per round (integer ≥ 0). Default 60 for the
     * intent playbook proposer, 76 for the keyword-rules proposer (40 single
     * edits, and 36 for its learned scores and bundles). 0: it scores none and proposes its best
     * locally screened edits unscored (or, with `maxScreened: 0`, the first
     * edits it generates); the gate evaluates every candidate either way.
     */
    maxEvaluations: count(0).optional(),
    /**
     * Error-driven proposer only: most edits screened locally per round
     * (re-running the offline executor or the routing rules on the examples an
     * edit touches; integer ≥ 0). Default 1000 for the intent playbook
     * proposer, 5000 for the keyword-rules proposer. 0: no local screening:
     * the edits are scored in the order generated, up to `maxEvaluations`.
     */
    maxScreened: count(0).optional(),
    /** Search proposer only: the parameters and their domains, by dotted path in the artifact (docs/search.md). Required by `search`. */
    space: searchSpaceSchema.optional(),
    /** Search proposer only: scored points before the TPE model is used (integer ≥ 0). Default 6. */
    startupTrials: count(0).optional(),
    /** Search proposer only: share of scored points that are "good", in (0, 1). Default 0.25. */
    gamma: z.number().gt(0, 'must be above 0').lt(1, 'must be below 1').optional(),
    /** Search proposer only: `false` draws every candidate at random (random search). Default true. */
    tpe: z.boolean().optional(),
  })
  .superRefine((proposer, context) => {
    if (proposer.kind === 'search' && proposer.space === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['space'],
        message:
          'the search proposer needs proposer.space: the parameters it may change, e.g. { nEstimators: { type: int, low: 1, high: 64 } } (docs/search.md)',
      });
    }
    if (proposer.kind !== 'search') {
      for (const key of SEARCH_ONLY) {
        if (proposer[key] !== undefined)
          context.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies to the search proposer only (proposer.kind: search)`,
          });
      }
    }
    if (proposer.kind !== 'reflective') {
      for (const key of ['model', 'baseURL', 'apiKeyEnv'] as const) {
        if (proposer[key] !== undefined) {
          context.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies to a reflective proposer only (proposer.kind: reflective); the ${proposer.kind} proposer calls no model`,
          });
        }
      }
    }
    if (proposer.kind !== 'error-driven') {
      for (const key of ERROR_DRIVEN_ONLY) {
        if (proposer[key] !== undefined) {
          context.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies to the error-driven proposer only (it screens and scores its own edits); a reflective proposer asks its model once per round and scores nothing itself`,
          });
        }
      }
    }
  });
