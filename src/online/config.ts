/**
 * The configuration of an online study: `kloop.yaml` with `mode: online`.
 *
 * An online study has an artifact, a `program.md`, a proposer and `metrics:`;
 * it has no corpus and no executor (the world answers, not a gold label), so
 * `corpus`, `executor`, `task`, `weights` and `corpusPolicy` are refused. The
 * file is read with strict zod schemas: an unknown key, a wrong type or a
 * value out of range is an {@link InputError} naming the file, the line and
 * the field, as for an offline study (src/config/config.ts).
 *
 * @example
 * ```yaml
 * mode: online
 * artifact: sequence_strategy.md
 * metrics:
 *   primary: { name: reply_rate, kind: binary, direction: increase }
 *   guardrails:
 *     - { name: unsubscribe_rate, kind: binary, direction: decrease, margin: 0.004 }
 *   attributionWindow: 72h
 *   split: 0.5                 # the candidate's share of traffic at the top of the ramp
 *   ramp: [0.05, 0.2, 0.5]     # the candidate's share, step by step (ends at split)
 *   rampEvery: 1d              # a ramp step lasts at least this long, and is taken only without harm
 *   windows: { minUnitsPerArm: 2000, confirmationUnits: 1500 }
 * ```
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.ts';
import { fieldName, parseLocatedYaml, parseWithSchema, type LocatedYaml } from '../program/yaml-locations.ts';
import { CONFIG_FILE_NAME, cronExpression, DEFAULT_FAST_CADENCE, timeZoneSchema } from '../config/config.ts';
import { isPostgresUrl } from '../storage/location.ts';
import { durationSchema } from './duration.ts';
import { DEFAULT_ONLINE_GATE_SETTINGS } from './gate/online-gate-settings.ts';

/** The study modes of `mode:` in kloop.yaml; `offline` is the default. */
export const STUDY_MODES = ['offline', 'online'] as const;
export type StudyMode = (typeof STUDY_MODES)[number];

/** A metric or guardrail name: letters, digits, `_`, `-` and `.`, as outcome lines spell it. */
const metricName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'a metric name: a letter, then letters, digits, _, - or . (at most 64)');

const metricSchema = z.strictObject({
  name: metricName,
  /** `binary` (a unit's value is 0 or 1: did it reply?) or `continuous` (a unit's value is the sum of its outcomes: revenue). Default binary. */
  kind: z.enum(['binary', 'continuous']).default('binary'),
  /** Which way is better. Default `increase`. */
  direction: z.enum(['increase', 'decrease']).default('increase'),
});

const guardrailSchema = metricSchema.extend({
  /**
   * Non-inferiority margin, in the metric's own units per unit (absolute, e.g.
   * 0.004 = 0.4 percentage points of unsubscribe rate): the candidate may be
   * worse than the incumbent by less than this. Required.
   */
  margin: z.number().min(0),
});

/** Default of `metrics.attributionWindow`. */
export const DEFAULT_ATTRIBUTION_WINDOW = '72h';
/** Default of `metrics.rampEvery`. */
export const DEFAULT_RAMP_EVERY = '1d';
const GATE = DEFAULT_ONLINE_GATE_SETTINGS;

const windowsSchema = z.strictObject({
  /** Units per arm whose attribution window has closed before the primary metric is judged (integer ≥ 2). Default: the online gate's (src/online/gate/online-gate-settings.ts). */
  minUnitsPerArm: z.int().min(2).default(GATE.minUnitsPerArm),
  /** Fresh units per arm of the confirmation window (integer ≥ 2); the proposer never sees their outcomes. Default: the online gate's. */
  confirmationUnits: z.int().min(2).default(GATE.confirmationUnits),
  /** The traffic budget: analysed units per arm after which the decision window is spent (`not_significant`). Default none. */
  maxUnitsPerArm: z.int().min(2).optional(),
});

const scraperSchema = z.strictObject({
  /** The program and its arguments, run in the study folder with `--since <cursor>`; it prints outcome lines. */
  command: z.array(z.string().min(1, 'an argument is empty')).min(1, 'give the program, e.g. [node, scrape.mjs]'),
  /** Most time one scrape may take, in ms. Default 60 000. */
  timeoutMs: z.int().min(1).default(60_000),
});

const metricsSchema = z
  .strictObject({
    /** The primary metric: a name (binary, increase) or `{ name, kind, direction }`. Required. */
    primary: z.union([
      metricName.transform((name) => ({ name, kind: 'binary' as const, direction: 'increase' as const })),
      metricSchema,
    ]),
    /** Guardrail metrics with their non-inferiority margins. Default none. */
    guardrails: z.array(guardrailSchema).default([]),
    /** How long after its exposure an outcome still counts for it (`90m`, `72h`, `3d`). Default 72h. */
    attributionWindow: durationSchema.prefault(DEFAULT_ATTRIBUTION_WINDOW),
    /** The candidate's share of the traffic at the top of the ramp, in (0, 1); the incumbent gets the rest. Default: the online gate's (0.5). */
    split: z.number().gt(0).lt(1).default(GATE.split),
    /** The candidate's share step by step, increasing, ending at `split`. Default `[split]` (no ramp). */
    ramp: z.array(z.number().gt(0).lt(1)).min(1).optional(),
    /** Shortest time between two ramp steps (`12h`, `1d`). Default 1d. */
    rampEvery: durationSchema.prefault(DEFAULT_RAMP_EVERY),
    windows: windowsSchema.prefault({}),
    /** The metric scraper (optional): a program printing outcome lines. */
    scraper: scraperSchema.optional(),
  })
  .superRefine((metrics, context) => {
    const names = [metrics.primary.name, ...metrics.guardrails.map((guardrail) => guardrail.name)];
    metrics.guardrails.forEach((guardrail, index) => {
      if (names.indexOf(guardrail.name) !== index + 1)
        context.addIssue({
          code: 'custom',
          path: ['guardrails', index, 'name'],
          message: `the metric "${guardrail.name}" is named twice`,
        });
    });
    const ramp = metrics.ramp;
    if (ramp === undefined) return;
    ramp.forEach((share, index) => {
      if (index > 0 && share <= ramp[index - 1]!)
        context.addIssue({ code: 'custom', path: ['ramp', index], message: 'the ramp must increase step by step' });
    });
    if (ramp.at(-1) !== metrics.split)
      context.addIssue({
        code: 'custom',
        path: ['ramp', ramp.length - 1],
        message: `the ramp must end at split (${metrics.split})`,
      });
  });

const ideasProposerSchema = z.strictObject({
  /**
   * `ideas`: the offline stand-in, one variant per idea listed in program.md's
   * Instructions register (src/online/proposers/ideas-proposer.ts). Calls no model.
   */
  kind: z.literal('ideas'),
});

const reflectiveProposerSchema = z.strictObject({
  /**
   * `reflective`: a model writes each variant from the decided experiments'
   * outcomes (their variants, arms, lift, interval and verdict on the
   * decision window; never a confirmation window):
   * src/online/proposers/reflective-online-proposer.ts.
   */
  kind: z.literal('reflective'),
  /** Its model, `provider:model` (openai, anthropic, ollama, openai-compatible). Required. */
  model: z.string().trim().min(1),
  /** The base URL of its model's server; default the provider's variable (OPENAI_BASE_URL, ...) or its default server. */
  baseURL: z.url().optional(),
  /** The NAME of the environment variable holding its key; default the provider's (OPENAI_API_KEY, ...). */
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the NAME of an environment variable')
    .optional(),
  /** Sampling temperature; default the provider's. */
  temperature: z.number().min(0).max(2).optional(),
  /** Most output tokens of an answer. Default 4096. */
  maxOutputTokens: z.int().min(1).default(4096),
  /** Timeout of one call, ms. Default 60 000. */
  timeoutMs: z.int().min(1).default(60_000),
});

/** `proposer:` — `ideas` (the default, no model) or `reflective` (a model). */
const proposerSchema = z.preprocess(
  (value) =>
    value === undefined || value === null
      ? { kind: 'ideas' }
      : typeof value === 'object' && !Array.isArray(value) && !('kind' in value)
        ? { kind: 'ideas', ...value }
        : value,
  z.discriminatedUnion('kind', [ideasProposerSchema, reflectiveProposerSchema]),
);

const gateSchema = z.strictObject({
  /** Level of the anytime-valid test of the primary metric (and of the harm stop), in (0, 1). Default 0.05. */
  alpha: z.number().gt(0).lt(1).default(GATE.alpha),
  /** Level of the confirmation window's test, in (0, 1). Default 0.05. */
  shadowAlpha: z.number().gt(0).lt(1).default(GATE.shadowAlpha),
  /** Refuse an experiment whose assignment counts fit the split with p below this. Default 0.001. */
  srmAlpha: z.number().gt(0).lt(1).default(GATE.srmAlpha),
});

/** Default cadence of an online study's slow loop: every day at midnight (a decision a day; the tests are anytime-valid, so looking more often costs nothing in false accepts). */
export const DEFAULT_ONLINE_SLOW_CADENCE = '0 0 * * *';

/** The cadences of `kloop schedule` on an online study (src/online/study/online-schedule.ts). */
const scheduleSchema = z.strictObject({
  /** Cadence of the fast loop: the scraper, harm stops, sample-ratio stops and ramp steps. Default every hour, "0 * * * *"; "off" disables it. */
  fast: z.union([z.literal('off'), cronExpression]).default(DEFAULT_FAST_CADENCE),
  /** Cadence of the slow loop: the scraper, then decide what is ripe and start the next experiment (one `kloop run` step). Default daily at 00:00, "0 0 * * *". */
  slow: cronExpression.default(DEFAULT_ONLINE_SLOW_CADENCE),
  /** IANA time zone of the cadences, e.g. "Europe/Paris". Default the system's. */
  timezone: timeZoneSchema.optional(),
});

const stoppingSchema = z.strictObject({
  /** Most experiments of the study (A/B; the A/A calibration not counted). Default 20. */
  maxExperiments: z.int().min(0).default(20),
  /** Most US dollars the reflective proposer's model may cost over the study (counted across runs in the notebook); then the study stops as `budget`. Default none. */
  maxCostUsd: z.number().min(0).optional(),
});

/** The schema of an online study's `kloop.yaml`. */
export const onlineConfigSchema = z.strictObject({
  mode: z.literal('online'),
  /** Artifact file, relative to the study. Required. */
  artifact: z.string().trim().min(1),
  /** Program file, relative to the study. Default `program.md`. */
  program: z.string().trim().min(1).default('program.md'),
  metrics: metricsSchema,
  proposer: proposerSchema,
  gate: gateSchema.prefault({}),
  stopping: stoppingSchema.prefault({}),
  /** Cadences of `kloop schedule`: `fast` (default hourly) and `slow` (default daily at midnight). */
  schedule: scheduleSchema.prefault({}),
  /** Seed of the assignment salt and every random choice. Default 1. */
  seed: z.int().min(0).default(1),
  /** A PostgreSQL URL for a shared notebook; absent: `.kloop/kloop.db`. */
  storage: z.string().trim().refine(isPostgresUrl, 'a postgres:// or postgresql:// URL').optional(),
});

type ParsedOnlineConfig = z.output<typeof onlineConfigSchema>;
/** A metric definition as configured. */
export type OnlineMetric = z.output<typeof metricSchema>;
/** A guardrail definition as configured. */
export type OnlineGuardrail = z.output<typeof guardrailSchema>;

/** A loaded online study configuration: defaults applied, durations in ms, paths absolute. */
export interface OnlineStudyConfig extends Omit<ParsedOnlineConfig, 'artifact' | 'program' | 'metrics'> {
  metrics: Omit<ParsedOnlineConfig['metrics'], 'ramp' | 'attributionWindow' | 'rampEvery'> & {
    /** The ramp, always set (`[split]` when not configured). */
    ramp: number[];
    attributionWindowMs: number;
    rampEveryMs: number;
  };
  dir: string;
  configPath: string;
  artifact: string;
  program: string;
}

/** Keys an offline study has that an online study must not. */
const OFFLINE_ONLY = ['corpus', 'executor', 'task', 'weights', 'corpusPolicy', 'signals'] as const;

/**
 * The `mode:` written in a study's kloop.yaml (`offline` when absent).
 *
 * @throws InputError when kloop.yaml cannot be read or parsed, or `mode` is not `offline` or `online`
 */
export function studyModeOf(studyDir: string): StudyMode {
  const { located, file } = readConfigYaml(studyDir);
  return modeOf(located, file);
}

/** The mode of a parsed kloop.yaml; `offline` when absent. */
export function modeOf(located: LocatedYaml, file: string): StudyMode {
  const value = located.value;
  const mode =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>).mode
      : undefined;
  if (mode === undefined) return 'offline';
  if (mode === 'offline' || mode === 'online') return mode;
  throw new InputError(`mode must be offline or online (got ${JSON.stringify(mode)})`, {
    file,
    line: located.lineOf(['mode']),
    field: 'mode',
    code: 'input.config',
  });
}

function readConfigYaml(studyDir: string): { located: LocatedYaml; file: string } {
  const file = path.join(studyDir, CONFIG_FILE_NAME);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new InputError(
      missing
        ? `file not found: a study folder needs a ${CONFIG_FILE_NAME}`
        : `cannot read: ${(error as Error).message}`,
      { file, code: 'input.config', cause: error },
    );
  }
  return { located: parseLocatedYaml(text, { file }), file };
}

/**
 * Reads and validates an online study's `<studyDir>/kloop.yaml` (UTF-8).
 *
 * @throws InputError (file, line, field) when the file is missing or
 *   malformed, `mode` is not `online`, a key is unknown or offline-only
 *   (`corpus`, `executor`, ...), a value is wrong, or the artifact or program
 *   file does not exist
 */
export function loadOnlineConfig(studyDir: string): OnlineStudyConfig {
  const dir = path.resolve(studyDir);
  const { located, file } = readConfigYaml(studyDir);
  if (modeOf(located, file) !== 'online')
    throw new InputError('not an online study: write `mode: online` in kloop.yaml', {
      file,
      line: 1,
      field: 'mode',
      code: 'input.config',
    });
  const written = located.value as Record<string, unknown>;
  for (const key of OFFLINE_ONLY) {
    if (Object.hasOwn(written, key)) {
      throw new InputError(
        `${key} applies to offline studies only: an online study has no corpus and no executor (the world's outcomes are its metric)`,
        {
          file,
          line: located.keyLineOf([], key),
          field: key,
          code: 'input.config',
        },
      );
    }
  }
  const parsed = parseWithSchema(onlineConfigSchema, located, { file });
  const artifact = path.resolve(dir, parsed.artifact);
  const program = path.resolve(dir, parsed.program);
  for (const [key, target] of [
    ['artifact', artifact],
    ['program', program],
  ] as const) {
    try {
      readFileSync(target);
    } catch {
      throw new InputError(`file not found: ${target}`, {
        file,
        line: located.lineOf([key]),
        field: fieldName([key]),
        code: 'input.config',
      });
    }
  }
  const { ramp, attributionWindow, rampEvery, ...metrics } = parsed.metrics;
  return {
    ...parsed,
    metrics: {
      ...metrics,
      ramp: ramp ?? [metrics.split],
      attributionWindowMs: attributionWindow,
      rampEveryMs: rampEvery,
    },
    dir,
    configPath: path.join(dir, CONFIG_FILE_NAME),
    artifact,
    program,
  };
}
