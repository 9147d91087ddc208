/**
 * The effective configuration of a study (`kloop config <study>`): every key
 * of the `kloop.yaml` schema that applies to the study, the value a run would
 * use, and where that value came from:
 *
 * | source       | meaning                                                         |
 * |--------------|-----------------------------------------------------------------|
 * | `kloop.yaml` | written in the file, at `line`                                  |
 * | `flag`       | given on the command line (`flag`: `--model`, `--base-url`, `--proposer-base-url`, `--max-cost-usd`, `--max-experiments`, `--deterministic`, `--db`) |
 * | `environment`| read from a provider's variable (`variable`: `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `OLLAMA_HOST`) |
 * | `default`    | kloop's default; `note` says which when it depends on the study (the proposer's, the executor kind's, 4 × `gate.repeats`, ...) |
 *
 * Keys that do not apply to the study (an llm executor's `model` on an
 * offline study, the error-driven proposer's limits on a reflective one) are
 * left out: `kloop.yaml` refuses them. A key with no value (an optional stop
 * not set) has `value: null` and a note saying what that means. The API key
 * itself is never read into the report: `executor.apiKeyEnv`'s note says
 * whether its variable is set in the environment.
 *
 * The keys come from the schema itself (`studyConfigSchema`, in its order),
 * so a new key is listed without a change here; the defaults that depend on
 * the study are derived below, from the same constants the run uses.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { parseLocatedYaml, type LocatedYaml } from '../program/yaml-locations.ts';
import { DEFAULT_API_KEY_ENV, parseModelSpec, type ProviderName } from '../providers/model-spec.ts';
import { maskSecrets } from '../text/mask-secrets.ts';
import { composeTaskAsync, composeWeights, taskKindOf } from '../study/compose.ts';
import type { StudyConfig } from '../config/config.ts';
import type { ConfigOverrides, Context } from './effective-defaults.ts';
import { derive, proposerKeyVariable, providerOf } from './effective-defaults.ts';

export type { ConfigOverrides } from './effective-defaults.ts';
import { DEFAULT_MAX_IN_FLIGHT, loadStudyConfig, studyConfigSchema } from '../config/config.ts';

/** Where an effective value came from. */
export type ValueSource = 'default' | 'kloop.yaml' | 'flag' | 'environment';

/** One key of the effective configuration. */
export interface EffectiveValue {
  /** Dotted key, as in error messages: `gate.alpha`, `providers.openai.maxInFlight`, `corpus`. */
  key: string;
  /** The value a run uses: a number, string, boolean, list; null when the key is unset (see `note`). */
  value: unknown;
  source: ValueSource;
  /** The line in kloop.yaml (source `kloop.yaml`). */
  line?: number;
  /** The flag (source `flag`), e.g. `--model`. */
  flag?: string;
  /** The environment variable (source `environment`), e.g. `OPENAI_BASE_URL`. */
  variable?: string;
  /** Which default, what an unset key means, or what else applies. */
  note?: string;
}

/** The effective configuration of one study. */
export interface EffectiveConfig {
  /** The study folder, absolute. */
  study: string;
  /** kloop.yaml, absolute. */
  configPath: string;
  /** Every key that applies, in the schema's order. */
  values: EffectiveValue[];
}

/**
 * Reads a study's kloop.yaml and describes its effective configuration.
 *
 * @throws InputError as `loadStudyConfig` (a missing, malformed or invalid
 *   kloop.yaml, naming file, line and field), and for a bad `--model`
 */
export async function describeEffectiveConfig(
  studyDir: string,
  overrides: ConfigOverrides = {},
): Promise<EffectiveConfig> {
  const config = loadStudyConfig(studyDir);
  const located = parseLocatedYaml(readFileSync(config.configPath, 'utf8').replace(/^\uFEFF/, ''), {
    file: config.configPath,
  });
  const executorModel = config.executor.kind === 'llm' ? (overrides.model ?? config.executor.model) : undefined;
  if (overrides.model !== undefined) parseModelSpec(overrides.model, { field: '--model' });
  const context: Context = {
    config,
    overrides,
    executorModel,
    proposerModel: config.proposer.kind === 'reflective' ? (config.proposer.model ?? executorModel) : undefined,
    deterministic: isDeterministic(config, overrides),
    intent: taskKindOf(config.task) === 'intent',
    writtenLine: (key) =>
      writtenValue(located, key.split('.')) !== undefined ? keyLine(located, key.split('.')) : undefined,
  };
  const values: EffectiveValue[] = [];
  const shape = objectShape(studyConfigSchema)!;
  for (const key of Object.keys(shape)) {
    switch (key) {
      case 'task':
        values.push(...taskValues(config, located));
        break;
      case 'weights':
        values.push(...(await weightValues(config, located)));
        break;
      case 'providers':
        values.push(...providerValues(context, located));
        break;
      default:
        walk(shape[key]!, [key], context, located, values);
    }
  }
  // A value or note may hold a URL with a password (storage: postgres://user:password@…): masked, as in every output.
  return { study: config.dir, configPath: config.configPath, values: values.map(maskValue) };
}

/** The entry with any password in its value (a string, or a list of strings) or note masked. */
function maskValue(entry: EffectiveValue): EffectiveValue {
  const value =
    typeof entry.value === 'string'
      ? maskSecrets(entry.value)
      : Array.isArray(entry.value)
        ? entry.value.map((item: unknown) => (typeof item === 'string' ? maskSecrets(item) : item))
        : entry.value;
  return { ...entry, value, ...(entry.note !== undefined ? { note: maskSecrets(entry.note) } : {}) };
}

/** The object shape under defaults, prefaults, optionals and refinements; undefined for a leaf. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let current = schema as unknown as {
    def: { type: string; innerType?: z.ZodType };
    shape?: Record<string, z.ZodType>;
  };
  while (current.def.type === 'default' || current.def.type === 'prefault' || current.def.type === 'optional')
    current = current.def.innerType as never;
  return current.def.type === 'object' ? current.shape : undefined;
}

function walk(
  schema: z.ZodType,
  keyPath: string[],
  context: Context,
  located: LocatedYaml,
  values: EffectiveValue[],
): void {
  const shape = objectShape(schema);
  if (shape !== undefined) {
    for (const key of Object.keys(shape)) walk(shape[key]!, [...keyPath, key], context, located, values);
    return;
  }
  const entry = leafValue(keyPath, context, located);
  if (
    entry?.key === 'proposer.space' &&
    entry.source === 'kloop.yaml' &&
    typeof entry.value === 'object' &&
    entry.value !== null
  ) {
    // One row per parameter of the search space, each with its own line.
    for (const [name, spec] of Object.entries(entry.value))
      values.push({
        key: `proposer.space.${name}`,
        value: spec,
        source: 'kloop.yaml',
        line: keyLine(located, [...keyPath, name]),
      });
    return;
  }
  if (entry !== undefined) values.push(entry);
}

/** A path's value in the parsed YAML, or undefined when the file does not write it. */
function writtenValue(located: LocatedYaml, keyPath: readonly string[]): unknown {
  let value: unknown = located.value;
  for (const key of keyPath) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The line of the key itself (not of its value, which may start on the next line). */
function keyLine(located: LocatedYaml, keyPath: readonly string[]): number {
  return located.keyLineOf(keyPath.slice(0, -1), keyPath.at(-1)!);
}

function written(
  key: string,
  value: unknown,
  located: LocatedYaml,
  keyPath: readonly string[],
  note?: string,
): EffectiveValue {
  return { key, value, source: 'kloop.yaml', line: keyLine(located, keyPath), ...(note !== undefined ? { note } : {}) };
}

function byDefault(key: string, value: unknown, note?: string): EffectiveValue {
  return { key, value, source: 'default', ...(note !== undefined ? { note } : {}) };
}

/** The value in the parsed config (defaults applied) at a path. */
function configValue(config: StudyConfig, keyPath: readonly string[]): unknown {
  let value: unknown = config;
  for (const key of keyPath)
    value = value === null || typeof value !== 'object' ? undefined : (value as Record<string, unknown>)[key];
  return value;
}

function leafValue(keyPath: string[], context: Context, located: LocatedYaml): EffectiveValue | undefined {
  const key = keyPath.join('.');
  const { config, overrides } = context;
  const flag = flagOf(key, context);
  const derived = derive(key, context);
  if (derived === 'not applicable') return undefined;
  const note = noteOf(key, context);
  if (flag !== undefined)
    return { key, value: flag.value, source: 'flag', flag: flag.flag, ...(note !== undefined ? { note } : {}) };
  if (writtenValue(located, keyPath) !== undefined)
    return written(key, displayValue(key, configValue(config, keyPath), config), located, keyPath, note);
  const parsed = configValue(config, keyPath);
  if (parsed !== undefined) return byDefault(key, displayValue(key, parsed, config), note);
  const fallback = derived ?? { value: null };
  const notes = [fallback.note, note].filter((text): text is string => text !== undefined);
  if (fallback.variable !== undefined)
    return {
      key,
      value: fallback.value,
      source: 'environment',
      variable: fallback.variable,
      ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
    };
  return byDefault(key, fallback.value, notes.length > 0 ? notes.join('; ') : undefined);
}

/** The paths of the study's files as written (relative to the study folder). */
function displayValue(key: string, value: unknown, config: StudyConfig): unknown {
  if (key === 'artifact' || key === 'program') return path.relative(config.dir, value as string);
  if (key === 'corpus') return (value as string[]).map((pattern) => path.relative(config.dir, pattern));
  return value;
}

function flagOf(key: string, context: Context): { flag: string; value: unknown } | undefined {
  const { overrides } = context;
  if (key === 'proposer.baseURL') {
    if (overrides.proposerBaseUrl !== undefined)
      return { flag: '--proposer-base-url', value: overrides.proposerBaseUrl };
    const executorProvider = providerOf(context.executorModel);
    if (
      overrides.baseUrl !== undefined &&
      (executorProvider === undefined || executorProvider === providerOf(context.proposerModel))
    )
      return { flag: '--base-url', value: overrides.baseUrl };
    return undefined;
  }
  if (key === 'executor.model' && overrides.model !== undefined) return { flag: '--model', value: overrides.model };
  if (key === 'executor.baseURL' && overrides.baseUrl !== undefined)
    return { flag: '--base-url', value: overrides.baseUrl };
  if (key === 'stopping.maxCostUsd' && overrides.maxCostUsd !== undefined)
    return { flag: '--max-cost-usd', value: overrides.maxCostUsd };
  if (key === 'stopping.maxExperiments' && overrides.maxExperiments !== undefined)
    return { flag: '--max-experiments', value: overrides.maxExperiments };
  if (key === 'storage' && overrides.db !== undefined) return { flag: '--db', value: overrides.db };
  return undefined;
}

/** True when the study's executor answers the same every time (the default of gate.requireCalibration is its negation). */
function isDeterministic(config: StudyConfig, overrides: ConfigOverrides): boolean {
  switch (config.executor.kind) {
    case 'offline':
    case 'routing-rules':
      return true;
    case 'command':
      return config.executor.deterministic === true;
    case 'llm':
      return overrides.deterministic === true && config.executor.temperature === 0;
  }
}

/** Notes that hold whatever the source. */
function noteOf(key: string, context: Context): string | undefined {
  const { config } = context;
  if (key === 'corpus') return `${config.corpusFiles.length} file(s) matched`;
  if (key === 'executor.apiKeyEnv' || key === 'proposer.apiKeyEnv') {
    const variable =
      key === 'executor.apiKeyEnv'
        ? (config.executor.apiKeyEnv ?? DEFAULT_API_KEY_ENV[providerOf(context.executorModel) ?? 'openai'])
        : proposerKeyVariable(context);
    if (variable === undefined) return undefined;
    const value = (context.overrides.env ?? process.env)[variable];
    return `${variable} is ${value !== undefined && value.trim() !== '' ? 'set' : 'not set'} in the environment`;
  }
  if (key === 'gate.requireCalibration' && config.gate.requireCalibration === undefined) {
    return context.deterministic
      ? 'false for a deterministic executor (its run-to-run noise is 0)'
      : 'true for an executor that may sample';
  }
  const replaced = (value: unknown): string =>
    `replaces ${formatEffectiveValue(value)}${context.writtenLine(key) !== undefined ? ` of kloop.yaml:${context.writtenLine(key)}` : ' (the default)'}`;
  if (key === 'stopping.maxExperiments' && context.overrides.maxExperiments !== undefined)
    return replaced(config.stopping.maxExperiments);
  if (
    key === 'stopping.maxCostUsd' &&
    context.overrides.maxCostUsd !== undefined &&
    config.stopping.maxCostUsd !== undefined
  )
    return replaced(config.stopping.maxCostUsd);
  if (key === 'executor.model' && context.overrides.model !== undefined && config.executor.model !== undefined)
    return replaced(config.executor.model);
  if (key === 'executor.baseURL' && context.overrides.baseUrl !== undefined && config.executor.baseURL !== undefined)
    return replaced(config.executor.baseURL);
  return undefined;
}

/** `task.kind` and the task's settings, each from kloop.yaml (or the default `intent`). */
function taskValues(config: StudyConfig, located: LocatedYaml): EffectiveValue[] {
  const raw = writtenValue(located, ['task']);
  const spec = config.task;
  if (typeof spec === 'string')
    return [raw === undefined ? byDefault('task.kind', spec) : written('task.kind', spec, located, ['task'])];
  const values: EffectiveValue[] = [];
  const flatten = (value: unknown, keyPath: string[]): void => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) flatten(inner, [...keyPath, key]);
      return;
    }
    values.push(
      writtenValue(located, keyPath) !== undefined
        ? written(keyPath.join('.'), value, located, keyPath)
        : byDefault(keyPath.join('.'), value),
    );
  };
  flatten(spec, ['task']);
  return values;
}

/** The composite weight of each of the task's components. */
async function weightValues(config: StudyConfig, located: LocatedYaml): Promise<EffectiveValue[]> {
  const { task } = await composeTaskAsync(config);
  const weights = composeWeights(task, config);
  return Object.entries(weights).map(([name, weight]) =>
    writtenValue(located, ['weights', name]) !== undefined
      ? written(`weights.${name}`, weight, located, ['weights', name])
      : byDefault(`weights.${name}`, weight, `the ${task.id} task's default`),
  );
}

/** `providers.<name>.maxInFlight` of each provider the study calls, and of any written in kloop.yaml. */
function providerValues(context: Context, located: LocatedYaml): EffectiveValue[] {
  const used = new Set<ProviderName>();
  for (const model of [context.executorModel, context.proposerModel]) {
    const provider = providerOf(model);
    if (provider !== undefined) used.add(provider);
  }
  const configured = context.config.providers ?? {};
  const names = [...new Set<ProviderName>([...used, ...(Object.keys(configured) as ProviderName[])])];
  return names.map((name) => {
    const keyPath = ['providers', name, 'maxInFlight'];
    const key = keyPath.join('.');
    const unused = used.has(name)
      ? undefined
      : `no model of this study is on ${name} (it applies when --model or proposer.model names one)`;
    const value = configured[name]?.maxInFlight;
    if (value !== undefined)
      return written(
        key,
        value,
        located,
        keyPath,
        unused ?? 'requests in flight at once, executor and proposer together',
      );
    return byDefault(key, DEFAULT_MAX_IN_FLIGHT, 'requests in flight at once, executor and proposer together');
  });
}

/** A value as text: lists in brackets, null as "none". */
export function formatEffectiveValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return `[${value.map((item) => formatEffectiveValue(item)).join(', ')}]`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A source as text: `kloop.yaml:14`, `flag --model`, `default`. */
export function formatSource(entry: EffectiveValue): string {
  if (entry.source === 'kloop.yaml') return `kloop.yaml:${entry.line}`;
  if (entry.source === 'flag') return `flag ${entry.flag}`;
  if (entry.source === 'environment') return `environment ${entry.variable}`;
  return 'default';
}
