/**
 * The study configuration: `kloop.yaml` in the study folder.
 *
 * Read with a strict schema: an unknown key, a wrong type or a value out of
 * range is an {@link InputError} naming the file, the line and the field
 * (`kloop.yaml:14: gate.alpah: unknown key "alpah" (allowed: ...)`). A
 * configured 0 means 0: defaults fill only keys that are absent.
 *
 * Paths (`artifact`, `program`, `corpus`) are relative to the study folder
 * and returned absolute; corpus globs (`*`, `?`, `[...]`, `{a,b}`, `**`, with
 * fast-glob) are also
 * expanded into `corpusFiles`.
 *
 * `task` is a kind (`intent`, the default; kept for old studies) or an
 * object whose `kind` says which task and whose other keys are its settings
 * (classification labels, extraction fields, a custom scorer module). The
 * task is built from it in `src/study/compose.ts`, where its settings and the
 * `weights` (keyed by the task's component names) are checked, with the
 * line of the offending key.
 *
 * @example
 * ```yaml
 * task: intent
 * executor: { kind: offline }
 * artifact: playbook.yaml
 * corpus: [corpus/*.yaml, corpus/*.jsonl]
 * gate: { alpha: 0.05, repeats: 1 }
 * stopping: { maxExperiments: 30, plateauRounds: 2 }
 * seed: 7
 * providers: { openai: { maxInFlight: 4 } }   # requests in flight per provider (default 8)
 * ```
 *
 * `kloop config <study>` prints every effective value with its source
 * (`src/report/effective-config.ts`, docs/config.md).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import fastGlob from 'fast-glob';
import { z } from 'zod';
import { InputError } from '../errors.ts';
import { fieldName, parseLocatedYaml, parseWithSchema, type LocatedYaml } from '../program/yaml-locations.ts';
import { Cron } from 'croner';
import { signalsConfigSchema } from './signals-config.ts';
import { PROVIDERS, type ProviderName } from '../providers/model-spec.ts';
import { isPostgresUrl, parseStorageTarget } from '../storage/location.ts';
import { DEFAULT_GATE_SETTINGS, DEFAULT_RETRIALS } from '../gate/gate-defaults.ts';
import { searchSpaceSchema } from '../proposers/search/space.ts';
import { DEFAULT_CANDIDATES_PER_ROUND, DEFAULT_PROPOSER_CONCURRENCY, DEFAULT_SEED } from './study-defaults.ts';

/** Name of the configuration file inside a study folder. */
export const CONFIG_FILE_NAME = 'kloop.yaml';

/** Extensions a corpus file may have. */
export const CORPUS_EXTENSIONS = ['.yaml', '.yml', '.jsonl'] as const;

const nonNegative = z.number().min(0);
const count = (minimum: number) => z.int().min(minimum);

/** The executor kinds: `offline` (the intent playbook), `routing-rules` (a routing rules file, classification), `llm`, `command` (any program). */
export const EXECUTOR_KINDS = ['offline', 'llm', 'routing-rules', 'command'] as const;
export type ExecutorKind = (typeof EXECUTOR_KINDS)[number];

/** Default `executor.timeoutMs` of an `llm` executor, per call, in ms (the providers' `DEFAULT_TIMEOUT_MS`). */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;
/** Default `executor.maxOutputTokens` of an `llm` executor: most output tokens of one answer. */
export const DEFAULT_LLM_MAX_OUTPUT_TOKENS = 2048;
/** Default `executor.timeoutMs` of a `command` executor, per example, in ms. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
/** Default `executor.concurrency` of a `command` executor: programs at once. */
export const DEFAULT_COMMAND_CONCURRENCY = 4;

/** The keys of `executor:` that only an `llm` executor reads. */
const LLM_ONLY = ['model', 'baseURL', 'apiKeyEnv', 'temperature', 'maxOutputTokens'] as const;

const executorSchema = z
  .strictObject({
    /**
     * `offline` (deterministic intent playbook executor, no network; task
     * intent), `routing-rules` (a routing rules file; task classification),
     * `llm` (a prompt for a language model) or `command` (any program).
     * Default `offline`.
     */
    kind: z.enum(EXECUTOR_KINDS).default('offline'),
    /** Model id, required for `llm`, e.g. `gpt-4.1-mini`. */
    model: z.string().trim().min(1).optional(),
    /** Base URL of an OpenAI-compatible endpoint. */
    baseURL: z.url().optional(),
    /** Name of the environment variable that holds the API key (never the key itself). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'give the NAME of an environment variable holding the key, not the key itself')
      .optional(),
    /** Sampling temperature in [0, 2]; absent = the provider's default. */
    temperature: z.number().min(0).max(2).optional(),
    maxOutputTokens: count(1).optional(),
    /** Per call (llm, default 60 000) or per example (command, default 30 000), in ms. */
    timeoutMs: count(1).optional(),
    /** `command` only: the program and its arguments (argv), run in the study folder, e.g. `[node, route.mjs]`. */
    command: z
      .array(z.string().min(1, 'an argument is empty'))
      .min(1, 'give the program, e.g. [node, route.mjs]')
      .optional(),
    /** `command` only: programs run at once. Default 4. */
    concurrency: count(1).optional(),
    /**
     * `command` only: the program gives the same output for the same artifact
     * and input (no repeats, no calibration needed, run-to-run noise 0).
     * Default false (a program may sample).
     */
    deterministic: z.boolean().optional(),
  })
  .superRefine((executor, context) => {
    if (executor.kind !== 'llm') {
      for (const key of LLM_ONLY) {
        if (executor[key] !== undefined)
          context.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies to an llm executor only (executor.kind: llm)`,
          });
      }
    }
    if ((executor.kind === 'offline' || executor.kind === 'routing-rules') && executor.timeoutMs !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['timeoutMs'],
        message: `timeoutMs applies to an llm or command executor only; the ${executor.kind} executor runs in-process`,
      });
    }
    if (executor.kind === 'llm' && executor.model === undefined) {
      context.addIssue({ code: 'custom', path: ['model'], message: 'an llm executor needs a model' });
    }
    if (executor.kind === 'command' && executor.command === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'a command executor needs the program to run, e.g. command: [node, route.mjs]',
      });
    }
    if (executor.kind !== 'command') {
      for (const key of ['command', 'concurrency', 'deterministic'] as const) {
        if (executor[key] !== undefined)
          context.addIssue({
            code: 'custom',
            path: [key],
            message: `${key} applies to a command executor only (executor.kind: command)`,
          });
      }
    }
  });

/** The proposer kinds: `error-driven` (offline, transformation-based learning), `reflective` (an LLM) or `search` (parameter search, docs/search.md). */
export const PROPOSER_KINDS = ['error-driven', 'reflective', 'search'] as const;

/** The keys of `proposer:` that only the search proposer reads. */
const SEARCH_ONLY = ['space', 'startupTrials', 'gamma', 'tpe'] as const;

/** The keys of `proposer:` that only the error-driven proposer reads. */
const ERROR_DRIVEN_ONLY = ['maxEvaluations', 'maxScreened'] as const;

const proposerSchema = z
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

/** Default of `providers.<name>.maxInFlight`: model requests in flight at once per provider. */
export const DEFAULT_MAX_IN_FLIGHT = 8;

/** Settings of one model provider (`providers.openai`, ...). */
const providerSettingsSchema = z.strictObject({
  /**
   * Most requests to this provider in flight at once, the executor's and the
   * proposer's together, whatever `proposer.concurrency` (integer ≥ 1; 0 is
   * refused: it would send nothing). The evaluator issues at least this many
   * per artifact, so with enough examples this is the number observed. An
   * HTTP 429 lowers it for a while (AIMD, src/providers/rate-limiter.ts), never
   * above it. Default 8.
   */
  maxInFlight: z.int('expected an integer').min(1, 'must be at least 1: 0 requests in flight would send none'),
});

/** `providers:` — settings per model provider, by its name in `provider:model`. */
const providersSchema = z.strictObject(
  Object.fromEntries(PROVIDERS.map((name) => [name, providerSettingsSchema.optional()])) as Record<
    ProviderName,
    z.ZodOptional<typeof providerSettingsSchema>
  >,
);

/** Default `gate.racing.batchSize`: example-repeats per batch. */
export const DEFAULT_RACING_BATCH_SIZE = 20;
/** Default `gate.racing.futilityLevel`: stop when the final test's predictive power is below this. */
export const DEFAULT_FUTILITY_LEVEL = 0.05;

/**
 * `gate.racing`: sequential evaluation in seeded batches with a futility
 * stop, and racing of a round's candidates (docs/gate.md, "Racing"). `true`
 * or `false`, or the settings. Default: on for a non-deterministic executor
 * (a sampled model: every evaluation is paid for), off for a deterministic one.
 */
const racingSchema = z.union([
  z.boolean(),
  z.strictObject({
    /** Race the candidates. Default: true for a non-deterministic executor, false for a deterministic one. */
    enabled: z.boolean().optional(),
    /** Example-repeats of the optimization partition per batch (integer ≥ 1). Default 20. */
    batchSize: count(1).default(DEFAULT_RACING_BATCH_SIZE),
    /**
     * Stop a candidate for futility when the predictive power of the final
     * gate test (the chance it would still pass, given the batches so far) is
     * below this, in [0, 1). 0 = only when the anytime-valid bound lies below
     * the margin. Default 0.05.
     */
    futilityLevel: z.number().min(0).lt(1).default(DEFAULT_FUTILITY_LEVEL),
  }),
]);

const gateSchema = z.strictObject({
  /** Significance level of the one-sided tests on the optimization partition, in (0, 1). Default 0.05. */
  alpha: z.number().gt(0).lt(1).default(DEFAULT_GATE_SETTINGS.alpha),
  /**
   * Level of the one-sided paired t-test on the shadow partition, in (0, 1):
   * the most a true zero shadow effect may confirm a gain by chance, per
   * decision that reaches the shadow. Default 0.05.
   */
  shadowAlpha: z.number().gt(0).lt(1).default(DEFAULT_GATE_SETTINGS.shadowAlpha),
  /** Evaluation repeats per artifact and partition. Default 1. */
  repeats: count(1).default(1),
  /** γ: required Δshadow / Δoptimization. Default 0.5. */
  generalizationRatio: nonNegative.default(DEFAULT_GATE_SETTINGS.generalizationRatio),
  /** m = this × SE of the shadow paired differences. Default 1. */
  shadowMarginSe: nonNegative.default(DEFAULT_GATE_SETTINGS.shadowMarginSe),
  /** Allowed per-example drop on anchors beyond measured noise, composite units. Default 0. */
  anchorTolerance: nonNegative.max(1).default(DEFAULT_GATE_SETTINGS.anchorTolerance),
  /** Smallest bigram Jaccard distance from every earlier delta, in [0, 1]. Default 0.2. */
  minDeltaDistance: z.number().min(0).max(1).default(0.2),
  /**
   * Times a delta refused by a noisy test (`not_significant`,
   * `not_confirmed`, `futility`) may be judged again when it comes back
   * against a changed incumbent; each re-trial is judged at α/K and
   * shadowAlpha/K (K = this), so the re-trials of a delta spend at most one
   * more α (src/loop/retrials.ts). 0: never. Default 2.
   */
  retrials: z.number().int().min(0).max(20).default(DEFAULT_RETRIALS),
  /** k in τ = k × rolling max noise SD (the gate compares Δ with τ·√(2/R)). Default 1. */
  thresholdK: nonNegative.default(DEFAULT_GATE_SETTINGS.thresholdK),
  /** An anchor may drop by anchorTolerance + anchorK × its per-example SD × √(2/R). Default 3. */
  anchorK: nonNegative.default(DEFAULT_GATE_SETTINGS.anchorK),
  /** Calibrations the rolling maximum looks back over. Default 5. */
  calibrationWindow: count(1).default(5),
  /**
   * Most repeats the incumbent of a stochastic executor is evaluated with: it
   * starts at `repeats` and is topped up by `repeats` fresh samples each round
   * it stays the incumbent, up to this (integer ≥ 1; values below `repeats`
   * mean `repeats`). Default 4 × repeats. Ignored for a deterministic executor
   * (its repeats are identical: the default is then `repeats`).
   */
  incumbentRepeats: count(1).optional(),
  /** Smallest Cohen's d between incumbent and an ablated artifact. Default 0.5. */
  minCohensD: nonNegative.default(0.5),
  /**
   * Refuse to run without a calibration for the current fingerprint. Default:
   * true for a non-deterministic executor (a sampled model), false for a
   * deterministic one (its run-to-run noise is 0 by construction); the same
   * in `createStudy` (src/config/study-defaults.ts).
   */
  requireCalibration: z.boolean().optional(),
  /** Noise repeats of the incumbent during calibration (at least 2 for an SD). Default 8. */
  noiseRepeats: count(2).default(8),
  /** Signal repeats of incumbent and ablated artifact during calibration. Default 3. */
  signalRepeats: count(1).default(3),
  /** Racing: sequential evaluation with a futility stop (see {@link racingSettingsOf}). Default on for a non-deterministic executor. */
  racing: racingSchema.optional(),
});

/**
 * The racing settings a study runs with, or undefined when racing is off:
 * `gate.racing` as configured (`true`/`false`, or `{ enabled, batchSize,
 * futilityLevel }`), on by default for a non-deterministic executor.
 */
export function racingSettingsOf(
  racing: z.output<typeof racingSchema> | undefined,
  deterministic: boolean,
): { batchSize: number; futilityLevel: number } | undefined {
  const settings = typeof racing === 'object' ? racing : undefined;
  const enabled = typeof racing === 'boolean' ? racing : (settings?.enabled ?? !deterministic);
  if (!enabled) return undefined;
  return {
    batchSize: settings?.batchSize ?? DEFAULT_RACING_BATCH_SIZE,
    futilityLevel: settings?.futilityLevel ?? DEFAULT_FUTILITY_LEVEL,
  };
}

/** `{ racing }` when racing is on, `{}` when off: to spread into a study's gate settings. */
export function withRacing(racing: { batchSize: number; futilityLevel: number } | undefined): {
  racing?: { batchSize: number; futilityLevel: number };
} {
  return racing === undefined ? {} : { racing };
}

const stoppingSchema = z.strictObject({
  /** Most experiments (evaluated candidates) in a run. Default 60. */
  maxExperiments: count(0).default(60),
  /** Stop after this many rounds (that evaluated something) without an accepted candidate. Default 3. */
  plateauRounds: count(1).default(3),
  /**
   * Stop as `no_new_proposals` (exit 0) after this many rounds in a row in
   * which the proposer brought nothing new to evaluate. Default 2.
   */
  idleRounds: count(1).default(2),
  /** Stop once the incumbent's optimization composite reaches this, in [0, 1]. */
  target: z.number().min(0).max(1).optional(),
  /** Stop after this many consecutive proposal or evaluation failures. Default 5. */
  maxConsecutiveFailures: count(1).default(5),
  /**
   * Stop when more than this fraction of the run's proposals failed, in
   * [0, 1]; only once at least 10 proposals were attempted. A proposal is a
   * candidate that was evaluated, or a proposer answer that failed as a whole
   * (the call failed, or the answer was unusable); a failure is such an answer
   * or a candidate whose evaluation failed. Absent = no such stop.
   */
  maxFailureRate: z.number().min(0).max(1).optional(),
  /** Most rounds in a run. */
  maxRounds: count(0).optional(),
  /** Most money to spend in a run, in USD. */
  maxCostUsd: nonNegative.optional(),
});

const corpusPolicySchema = z.strictObject({
  /** Gate decisions a shadow example serves before it may graduate. Default 20. */
  graduateAfterDecisions: count(1).default(20),
  /** Days a shadow example serves before it may graduate. */
  graduateAfterDays: z.number().gt(0).optional(),
  /** Examples rotated out of shadow at a time. Default 3. */
  rotateSlice: count(0).default(3),
  /** Most gate decisions any shadow example may be used for. Default 40. */
  maxShadowExposures: count(1).default(40),
  /**
   * Rounds a shadow example serves (closed rounds since it entered shadow,
   * whether or not any decision consulted the shadow) before it may graduate,
   * whichever of decisions, rounds or days comes first. Default 5. Keeps a
   * study whose candidates never reach the shadow check from deadlocking:
   * its optimization partition still grows, `rotateSlice` per round boundary,
   * while the shadow is larger than the optimization partition and never
   * below 5 examples (docs/corpus.md, "Graduation").
   */
  graduateAfterRounds: count(1).default(5),
  /**
   * Admit corpus-file records whose gold has no app type (partial gold, e.g.
   * Golden UML imports), as `kloop corpus add --partial-gold` does. Default
   * false: such records are refused (`non_trivial_gold`) and left out.
   */
  partialGold: z.boolean().default(false),
});

/**
 * Composite weights by the task's component names (intent: `appType`,
 * `entityRecall`, `roleAccuracy`, `behaviorCoverage`, and the optional
 * `entityPrecision`, `relationRecall`); absent names keep the task's
 * defaults. The names and "at least one above 0" are checked once the task is
 * built (`src/study/compose.ts`).
 */
const weightsSchema = z.record(z.string().min(1), nonNegative);

/** The task kinds of `task:`. */
export const TASK_KINDS = ['intent', 'classification', 'extraction', 'custom'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

const classificationTaskSchema = z.strictObject({
  kind: z.literal('classification'),
  /** The closed set of labels, in report order. */
  labels: z.array(z.string()).min(1, 'list at least one label'),
  /** `accuracy` (default) or `misroute rate` (1 − accuracy): how reports name the headline. */
  reportAs: z.enum(['accuracy', 'misroute rate']).optional(),
  /** Fields of an object input written first in its text. */
  fieldOrder: z.array(z.string().min(1)).optional(),
});
const extractionTaskSchema = z.strictObject({
  kind: z.literal('extraction'),
  /** The fields, by name: `{ match: exact | set-f1 | number, weight?, tolerance?, description? }`. */
  fields: z.record(z.string(), z.unknown()),
  fieldOrder: z.array(z.string().min(1)).optional(),
});
const customTaskSchema = z.strictObject({
  kind: z.literal('custom'),
  /**
   * The scorer module, relative to the study folder: `score.ts`, or
   * `score.ts:functionName` for an export other than `score` (promptfoo's
   * `file://` form is accepted; `score.ts#functionName` is read as the same);
   * JS or TS, ESM or CJS.
   */
  module: z.string().trim().min(1),
});

/** `task:` — a kind, or an object with `kind` and the task's settings. */
const taskSchema = z.union([
  z.enum(TASK_KINDS),
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('intent') }),
    classificationTaskSchema,
    extractionTaskSchema,
    customTaskSchema,
  ]),
]);

/** A cron expression (5 or 6 fields, croner syntax), checked by parsing it; shared with online studies' `schedule`. */
export const cronExpression = z
  .string()
  .trim()
  .min(1)
  .refine((pattern) => {
    try {
      new Cron(pattern, { paused: true }).stop();
      return true;
    } catch {
      return false;
    }
  }, 'not a valid cron expression (e.g. "0 * * * *" = every hour, "0 3 * * 1" = Mondays 03:00)');

/** Default cadence of the fast loop: every hour. */
export const DEFAULT_FAST_CADENCE = '0 * * * *';
/** Default cadence of the slow loops: Mondays at 03:00. */
export const DEFAULT_SLOW_CADENCE = '0 3 * * 1';

/** An IANA time zone, e.g. "UTC" or "Europe/Paris" (checked with Intl.DateTimeFormat): `schedule.timezone` of offline and online studies. */
export const timeZoneSchema = z
  .string()
  .trim()
  .min(1)
  .refine((zone) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  }, 'not an IANA time zone (e.g. "UTC", "Europe/Paris")');

/** The two-speed schedule of `kloop schedule` (see docs/loops-c-d.md). */
const scheduleSchema = z.strictObject({
  /** Cadence of the fast loop (B, the optimization loop). Default every hour, "0 * * * *". */
  fast: cronExpression.default(DEFAULT_FAST_CADENCE),
  /** Cadence of the slow analyses (A, C, D). Default Mondays 03:00, "0 3 * * 1". */
  slow: cronExpression.default(DEFAULT_SLOW_CADENCE),
  /** Per-loop cadences overriding fast/slow; "off" disables a loop. */
  loops: z
    .strictObject({
      A: z.union([z.literal('off'), cronExpression]).optional(),
      B: z.union([z.literal('off'), cronExpression]).optional(),
      C: z.union([z.literal('off'), cronExpression]).optional(),
      D: z.union([z.literal('off'), cronExpression]).optional(),
    })
    .prefault({}),
  /** IANA time zone of the cadences, e.g. "Europe/Paris". Default the system's. */
  timezone: timeZoneSchema.optional(),
  /** Experiments each fast cycle may add (raises stopping.maxExperiments per cycle); absent = stopping as configured. */
  experimentsPerCycle: count(1).optional(),
});

/** The lab notebook's optional git mirror (src/storage/git-mirror.ts). */
const notebookSchema = z.strictObject({
  /** Commit every move of the active version (seed, accepted, approved, activated) to a git repository in `.kloop/notebook/`. Default false. */
  git: z.boolean().default(false),
});

/** `storage`: a PostgreSQL URL whose schema, if given, is a plain identifier (src/storage/location.ts). */
const storageSchema = z
  .string()
  .trim()
  .refine(
    (value) => isPostgresUrl(value),
    'a postgres:// or postgresql:// URL (leave storage out for the SQLite file .kloop/kloop.db)',
  )
  .refine((value) => {
    try {
      parseStorageTarget(value);
      return true;
    } catch {
      return false;
    }
  }, 'not a valid PostgreSQL URL, or its schema is not a plain lower-case identifier (letters, digits and _)');

const relativePath = z.string().trim().min(1);
const corpusPattern = relativePath.refine(
  (pattern) => CORPUS_EXTENSIONS.some((extension) => pattern.toLowerCase().endsWith(extension)),
  `a corpus file must end in ${CORPUS_EXTENSIONS.join(', ')}`,
);

/** The schema of `kloop.yaml` (strict objects: unknown keys are errors). */
export const studyConfigSchema = z
  .strictObject({
    /** The task: a kind or `{ kind, ...settings }`. Default `intent`. */
    task: taskSchema.default('intent'),
    executor: executorSchema.prefault({}),
    /** Artifact file, relative to the study. Required. */
    artifact: relativePath,
    /** Program file, relative to the study. Default `program.md`. */
    program: relativePath.default('program.md'),
    /** Corpus files or globs relative to the study (.yaml, .yml, .jsonl). Required. */
    corpus: z.union([
      corpusPattern.transform((pattern) => [pattern]),
      z.array(corpusPattern).min(1, 'list at least one corpus file'),
    ]),
    proposer: proposerSchema.prefault({}),
    gate: gateSchema.prefault({}),
    stopping: stoppingSchema.prefault({}),
    /** Seed of every random choice. Default 1. */
    seed: z.int().min(0).default(DEFAULT_SEED),
    corpusPolicy: corpusPolicySchema.prefault({}),
    /** Composite weights by component name; only ratios matter. Default the task's (intent: 0.25 / 0.35 / 0.20 / 0.20). */
    weights: weightsSchema.optional(),
    /** Two-speed schedule of `kloop schedule`. */
    schedule: scheduleSchema.prefault({}),
    /** Production signals (Loop D) and pattern mining (Loop C); see src/config/signals-config.ts. */
    signals: signalsConfigSchema.prefault({}),
    /** The lab notebook: `notebook.git: true` mirrors it as git commits. */
    notebook: notebookSchema.prefault({}),
    /** Settings per model provider: `providers: { openai: { maxInFlight: 4 } }`. */
    providers: providersSchema.prefault({}),
    /**
     * Where the notebook is kept: a `postgres://` URL (one study per schema:
     * `?schema=NAME`, default `public`); absent, the SQLite file
     * `.kloop/kloop.db`. `--db <url>` overrides it. See docs/storage.md.
     */
    storage: storageSchema.optional(),
  })
  .superRefine((config, context) => {
    if (
      config.proposer.kind === 'reflective' &&
      config.proposer.model === undefined &&
      config.executor.kind !== 'llm'
    ) {
      context.addIssue({
        code: 'custom',
        path: ['proposer', 'kind'],
        message: 'a reflective proposer needs a model: set proposer.model or use an llm executor',
      });
    }
  });

type ParsedConfig = z.output<typeof studyConfigSchema>;

/** A loaded study configuration: defaults applied, paths absolute. */
export interface StudyConfig
  extends Omit<ParsedConfig, 'artifact' | 'program' | 'corpus' | 'schedule' | 'signals' | 'notebook' | 'providers'> {
  /** Settings per model provider (always set by `loadStudyConfig`; optional for configs built in code). */
  providers?: ParsedConfig['providers'];
  /**
   * The line of each `task` and `weights` key in `kloop.yaml`, by dotted
   * field path (`weights.appType`, `task.labels`), for the errors of the
   * checks made once the task is built. Absent for configs built in code.
   */
  lines?: Readonly<Record<string, number>>;
  /** The lab notebook's git mirror (always set by `loadStudyConfig`; optional for configs built in code). */
  notebook?: ParsedConfig['notebook'];
  /** Two-speed schedule (always set by `loadStudyConfig`; optional for configs built in code). */
  schedule?: ParsedConfig['schedule'];
  /** Signals and pattern mining (always set by `loadStudyConfig`; optional for configs built in code). */
  signals?: ParsedConfig['signals'];
  /** Absolute path of the study folder. */
  dir: string;
  /** Absolute path of `kloop.yaml`. */
  configPath: string;
  /** Absolute path of the artifact file. */
  artifact: string;
  /** Absolute path of `program.md`. */
  program: string;
  /** Corpus files and globs, absolute, in the order written. */
  corpus: string[];
  /** Every corpus file the patterns match: absolute, sorted, each once. */
  corpusFiles: string[];
}

export type ExecutorConfig = StudyConfig['executor'];
export type TaskConfig = StudyConfig['task'];
export type ProposerConfig = StudyConfig['proposer'];
export type GateConfig = StudyConfig['gate'];
export type StoppingConfig = StudyConfig['stopping'];
export type CorpusPolicyConfig = StudyConfig['corpusPolicy'];
export type ScheduleConfig = ParsedConfig['schedule'];

/**
 * Reads and validates `<studyDir>/kloop.yaml` (UTF-8).
 *
 * @param studyDir the study folder, absolute or relative to the working directory
 * @throws InputError when `kloop.yaml` is missing (naming it), is malformed
 *   YAML (with the line), has an unknown key (naming the key and its line) or
 *   a wrong value (file, line, field); when the artifact or program file does
 *   not exist; when a corpus file listed by name does not exist, a corpus
 *   pattern matches no file (naming the pattern), or a folder it must read
 *   cannot be read
 */
export function loadStudyConfig(studyDir: string): StudyConfig {
  const dir = path.resolve(studyDir);
  const configPath = path.join(dir, CONFIG_FILE_NAME);
  const file = path.join(studyDir, CONFIG_FILE_NAME);
  let text: string;
  try {
    text = readFileSync(configPath, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new InputError(
      missing
        ? `file not found: a study folder needs a ${CONFIG_FILE_NAME}`
        : `cannot read: ${(error as Error).message}`,
      {
        file,
        studyPath: dir,
        code: 'input.config',
        cause: error,
      },
    );
  }
  const located = parseLocatedYaml(text, { file });
  if (located.value === null || located.value === undefined) {
    throw new InputError('the file is empty; it needs at least `artifact` and `corpus`', {
      file,
      line: 1,
      studyPath: dir,
      code: 'input.config',
    });
  }
  const parsed = parseWithSchema(studyConfigSchema, withoutOfflineMode(located, file), { file });
  refuseInapplicableKeys(parsed, located, file);

  const artifact = path.resolve(dir, parsed.artifact);
  const program = path.resolve(dir, parsed.program);
  requireFile(artifact, located, ['artifact'], file);
  requireFile(program, located, ['program'], file);
  const corpus = parsed.corpus.map((pattern) => path.resolve(dir, pattern));
  const corpusFiles = new Set<string>();
  const rawCorpus = (located.value as Record<string, unknown>).corpus;
  corpus.forEach((pattern, index) => {
    const corpusPath: PropertyKey[] = Array.isArray(rawCorpus) ? ['corpus', index] : ['corpus'];
    if (!hasGlob(pattern)) requireFile(pattern, located, corpusPath, file);
    let matches: string[];
    try {
      matches = expandGlob(pattern);
    } catch (error) {
      const failure = error as NodeJS.ErrnoException;
      throw new InputError(
        `cannot read ${failure.path ?? 'a folder'} while expanding "${parsed.corpus[index]}" (${failure.code ?? failure.message})`,
        {
          file,
          line: located.lineOf(corpusPath),
          field: fieldName(corpusPath),
          studyPath: dir,
          code: 'input.config',
          cause: error,
        },
      );
    }
    // Every pattern must match: one that matches nothing is a typo or a missing folder, never silently nothing.
    if (matches.length === 0) {
      throw new InputError(`the corpus pattern "${parsed.corpus[index]}" matches no file (looked for ${pattern})`, {
        file,
        line: located.lineOf(corpusPath),
        field: fieldName(corpusPath),
        studyPath: dir,
        code: 'input.config',
      });
    }
    for (const match of matches) corpusFiles.add(match);
  });
  return {
    ...parsed,
    lines: keyLines(located),
    dir,
    configPath,
    artifact,
    program,
    corpus,
    corpusFiles: [...corpusFiles].sort(),
  };
}

/**
 * The document without its `mode: offline` key (the default mode, written or
 * not); a `mode: online` study is read by src/online/config.ts instead.
 *
 * @throws InputError naming the line of `mode` when it is not `offline`
 */
function withoutOfflineMode(located: LocatedYaml, file: string): LocatedYaml {
  const value = located.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, 'mode'))
    return located;
  const { mode, ...rest } = value as Record<string, unknown>;
  if (mode !== 'offline') {
    const message =
      mode === 'online'
        ? 'this is an online study (mode: online): this command works on offline studies only; `kloop run` and `kloop show` read online studies'
        : `mode must be offline or online (got ${JSON.stringify(mode)})`;
    throw new InputError(message, { file, line: located.lineOf(['mode']), field: 'mode', code: 'input.config' });
  }
  return { ...located, value: rest };
}

/**
 * Refuses the keys written in `kloop.yaml` that would do nothing for this
 * study (a key that is accepted is honoured): for a task other than intent,
 * `corpusPolicy.partialGold` (a rule of intent gold) and the cadences of the
 * slow loops A, C and D (`schedule.slow`, `schedule.loops.A|C|D` other than
 * `off`), which work on intent studies only. The checks on `executor` and
 * `proposer` keys are in their schemas.
 *
 * @throws InputError naming the key and its line
 */
function refuseInapplicableKeys(parsed: ParsedConfig, located: LocatedYaml, file: string): void {
  const kind = typeof parsed.task === 'string' ? parsed.task : parsed.task.kind;
  if (kind === 'intent') return;
  const written = (path: string[]): unknown =>
    path.reduce<unknown>(
      (value, key) =>
        value !== null && typeof value === 'object' && Object.hasOwn(value, key)
          ? (value as Record<string, unknown>)[key]
          : undefined,
      located.value,
    );
  const refuse = (path: string[], message: string): never => {
    throw new InputError(message, { file, line: located.lineOf(path), field: fieldName(path), code: 'input.config' });
  };
  if (written(['corpusPolicy', 'partialGold']) !== undefined) {
    refuse(
      ['corpusPolicy', 'partialGold'],
      `partialGold applies to intent studies only (it admits intent gold without an app type); this study's task is ${kind}`,
    );
  }
  const slowOnly = `Loops A, C and D work on intent studies only; this study's task is ${kind}, so \`kloop schedule\` skips them`;
  if (written(['schedule', 'slow']) !== undefined)
    refuse(['schedule', 'slow'], `slow is the cadence of Loops A, C and D: ${slowOnly}`);
  for (const loop of ['A', 'C', 'D']) {
    const cadence = written(['schedule', 'loops', loop]);
    if (cadence !== undefined && cadence !== 'off')
      refuse(['schedule', 'loops', loop], `${slowOnly} (write "off", or leave the key out)`);
  }
}

/** The line of every key under `task` and `weights` (and of the two keys themselves), by dotted path. */
function keyLines(located: LocatedYaml): Record<string, number> {
  const lines: Record<string, number> = {};
  const root = located.value as Record<string, unknown>;
  const walk = (value: unknown, path: PropertyKey[]): void => {
    lines[fieldName(path)] = located.lineOf(path);
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, [...path, index]));
    else for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key]);
  };
  for (const key of ['task', 'weights']) if (Object.hasOwn(root, key)) walk(root[key], [key]);
  return lines;
}

function requireFile(filePath: string, located: LocatedYaml, fieldPath: PropertyKey[], file: string): void {
  if (existsSync(filePath) && statSync(filePath).isFile()) return;
  throw new InputError(`file not found: ${filePath}`, {
    file,
    line: located.lineOf(fieldPath),
    field: fieldName(fieldPath),
    code: 'input.config',
  });
}

/** True when a path is a glob pattern (`*`, `?`, `[...]`, `{a,b}`, `**`), as fast-glob reads it. */
function hasGlob(pattern: string): boolean {
  return fastGlob.isDynamicPattern(pattern.split(path.sep).join('/'));
}

/**
 * Expands an absolute glob into the files it matches, with fast-glob: `*` and
 * `?` within a name, `[abc]` classes, `{a,b}` alternatives, `**` for any
 * depth. Names starting with "." match only a pattern segment that starts
 * with "." (fast-glob's `dot: false`). Returns absolute paths, sorted, each
 * once. The folders before the first glob segment are taken literally, so a
 * study folder whose name holds `(`, `[` or `*` is no pattern.
 *
 * @throws the file system's error (EACCES, …) when a folder on the way cannot
 *   be read: an unreadable folder is never skipped in silence
 */
export function expandGlob(absolutePattern: string): string[] {
  const segments = absolutePattern.split(path.sep);
  const firstGlob = segments.findIndex((segment) => segment !== '' && fastGlob.isDynamicPattern(segment));
  if (firstGlob === -1)
    return existsSync(absolutePattern) && statSync(absolutePattern).isFile() ? [absolutePattern] : [];
  const base = segments.slice(0, firstGlob).join(path.sep) || path.sep;
  if (!existsSync(base)) return [];
  const matches = fastGlob.sync(segments.slice(firstGlob).join('/'), {
    cwd: base,
    absolute: true,
    onlyFiles: true,
    dot: false,
    followSymbolicLinks: true,
    suppressErrors: false,
    unique: true,
  });
  return [...new Set(matches.map((match) => path.normalize(match)))].sort();
}
