/**
 * `kloop config <study>`: every effective value of a study with its source
 * (default, kloop.yaml line, flag), in text and `--json`; exit 2 on a bad
 * study, kloop.yaml or flag. In-process (tests/cli-in-process.ts).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { studyConfigSchema } from '../src/config/config.ts';
import {
  describeEffectiveConfig,
  formatEffectiveValue,
  type EffectiveConfig,
  type EffectiveValue,
} from '../src/report/effective-config.ts';
import { kloop } from './cli-in-process.ts';

const EXAMPLES = path.resolve(import.meta.dirname, '../examples');
const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A copy of an example study (beside a copy of examples/intent, whose corpus intent-llm reads), its kloop.yaml edited. */
function copyOf(example: string, edit: (text: string) => string = (text) => text): string {
  const root = mkdtempSync(path.join(tmpdir(), 'kloop-config-command-'));
  directories.push(root);
  const copy = (name: string): void =>
    cpSync(path.join(EXAMPLES, name), path.join(root, name), {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}.kloop`),
    });
  copy(example);
  if (example !== 'intent') copy('intent');
  const directory = path.join(root, example);
  const file = path.join(directory, 'kloop.yaml');
  writeFileSync(file, edit(readFileSync(file, 'utf8')));
  return directory;
}

/** Every leaf key of the schema, dotted, in its order (objects opened; `task`, `weights` and `providers` by their own rules). */
function schemaLeaves(schema: z.ZodType, prefix: string[] = []): string[] {
  let current = schema as unknown as {
    def: { type: string; innerType?: z.ZodType };
    shape?: Record<string, z.ZodType>;
  };
  while (['default', 'prefault', 'optional'].includes(current.def.type)) current = current.def.innerType as never;
  if (current.def.type !== 'object' || ['task', 'weights', 'providers'].includes(prefix.join('.')))
    return [prefix.join('.')];
  return Object.entries(current.shape!).flatMap(([key, inner]) => schemaLeaves(inner, [...prefix, key]));
}

function valueOf(effective: EffectiveConfig, key: string): EffectiveValue {
  const entry = effective.values.find((value) => value.key === key);
  if (entry === undefined) throw new Error(`no ${key} in ${effective.values.map((value) => value.key).join(', ')}`);
  return entry;
}

/** The keys kloop.yaml refuses for an offline study with the error-driven proposer. */
const NOT_FOR_OFFLINE = [
  'executor.model',
  'executor.baseURL',
  'executor.apiKeyEnv',
  'executor.temperature',
  'executor.maxOutputTokens',
  'executor.timeoutMs',
  'executor.command',
  'executor.concurrency',
  'executor.deterministic',
  'proposer.model',
  'proposer.baseURL',
  'proposer.apiKeyEnv',
  'proposer.space',
  'proposer.startupTrials',
  'proposer.gamma',
  'proposer.tpe',
];

describe('kloop config', () => {
  it('prints every effective value of examples/intent with its source: the kloop.yaml line that sets it, or the default', async () => {
    const json = await kloop('config', 'examples/intent', '--json');
    expect(json.code).toBe(0);
    expect(json.stderr).toBe('');
    const effective = JSON.parse(json.stdout) as EffectiveConfig;
    expect(effective.configPath).toBe(path.join(EXAMPLES, 'intent', 'kloop.yaml'));
    const keys = effective.values.map((value) => value.key);
    // Every key of the schema that applies to the study, once, in the schema's order.
    const expected = schemaLeaves(studyConfigSchema)
      .flatMap((key) =>
        key === 'task'
          ? ['task.kind']
          : key === 'weights'
            ? [
                'weights.appType',
                'weights.entityRecall',
                'weights.roleAccuracy',
                'weights.behaviorCoverage',
                'weights.entityPrecision',
                'weights.relationRecall',
              ]
            : key === 'providers'
              ? []
              : [key],
      )
      .filter((key) => !NOT_FOR_OFFLINE.includes(key));
    expect(keys).toEqual(expected);

    // Each kloop.yaml source names the line that writes the key.
    const lines = readFileSync(path.join(EXAMPLES, 'intent', 'kloop.yaml'), 'utf8').split('\n');
    const fromFile = effective.values.filter((value) => value.source === 'kloop.yaml');
    expect(fromFile.length).toBe(37);
    for (const entry of fromFile) {
      const name = entry.key === 'task.kind' ? 'task' : entry.key.split('.').at(-1)!;
      expect(lines[entry.line! - 1], entry.key).toMatch(new RegExp(`^\\s*${name}:`));
    }
    expect(valueOf(effective, 'gate.alpha')).toEqual({
      key: 'gate.alpha',
      value: 0.05,
      source: 'kloop.yaml',
      line: 26,
    });
    expect(valueOf(effective, 'stopping.maxRounds')).toEqual({
      key: 'stopping.maxRounds',
      value: 8,
      source: 'kloop.yaml',
      line: 45,
    });
    // The defaults, with what they depend on.
    expect(valueOf(effective, 'proposer.maxEvaluations')).toEqual({
      key: 'proposer.maxEvaluations',
      value: 60,
      source: 'default',
      note: 'the intent playbook proposer',
    });
    expect(valueOf(effective, 'proposer.maxScreened')).toMatchObject({ value: 1000, source: 'default' });
    expect(valueOf(effective, 'stopping.idleRounds')).toEqual({
      key: 'stopping.idleRounds',
      value: 2,
      source: 'default',
    });
    expect(valueOf(effective, 'stopping.target')).toEqual({
      key: 'stopping.target',
      value: null,
      source: 'default',
      note: 'none: no target stop',
    });
    expect(valueOf(effective, 'gate.incumbentRepeats')).toMatchObject({ value: 1, source: 'default' });
    expect(valueOf(effective, 'weights.entityPrecision')).toMatchObject({ value: 0.2, source: 'kloop.yaml', line: 60 });
    expect(valueOf(effective, 'signals.endpoint.burst')).toEqual({
      key: 'signals.endpoint.burst',
      value: 20,
      source: 'default',
    });
    expect(valueOf(effective, 'corpus')).toMatchObject({
      value: ['corpus/*.yaml', 'corpus/*.jsonl'],
      source: 'kloop.yaml',
      line: 16,
    });

    // The text form: one row per value, with the same value and source.
    const text = await kloop('config', 'examples/intent');
    expect(text.code).toBe(0);
    const rows = text.stdout.split('\n');
    for (const entry of effective.values) {
      const source = entry.source === 'kloop.yaml' ? `kloop.yaml:${entry.line}` : 'default';
      const row = rows.find((line) => line.startsWith(`${entry.key} `));
      expect(row, entry.key).toBeDefined();
      expect(row!.split(/\s{2,}/).slice(0, 3), entry.key).toEqual([
        entry.key,
        formatEffectiveValue(entry.value),
        source,
      ]);
    }
  });

  it('names a flag as the source of what it replaces, and the providers the study calls', async () => {
    const study = copyOf('intent-llm', (text) => `${text}\nproviders:\n  openai:\n    maxInFlight: 3\n`);
    const { code, stdout } = await kloop(
      'config',
      study,
      '--json',
      '--model',
      'openai-compatible:qwen2.5-7b',
      '--base-url',
      'http://127.0.0.1:8080/v1',
      '--max-experiments',
      '0',
      '--max-cost-usd',
      '1.5',
    );
    expect(code).toBe(0);
    const effective = JSON.parse(stdout) as EffectiveConfig;
    expect(valueOf(effective, 'executor.model')).toEqual({
      key: 'executor.model',
      value: 'openai-compatible:qwen2.5-7b',
      source: 'flag',
      flag: '--model',
      note: 'replaces openai:gpt-4.1-mini of kloop.yaml:16',
    });
    expect(valueOf(effective, 'executor.baseURL')).toEqual({
      key: 'executor.baseURL',
      value: 'http://127.0.0.1:8080/v1',
      source: 'flag',
      flag: '--base-url',
    });
    expect(valueOf(effective, 'stopping.maxExperiments')).toEqual({
      key: 'stopping.maxExperiments',
      value: 0,
      source: 'flag',
      flag: '--max-experiments',
      note: 'replaces 12 of kloop.yaml:56',
    });
    expect(valueOf(effective, 'stopping.maxCostUsd')).toMatchObject({
      value: 1.5,
      source: 'flag',
      flag: '--max-cost-usd',
    });
    expect(valueOf(effective, 'proposer.model')).toMatchObject({
      value: 'openai-compatible:qwen2.5-7b',
      source: 'default',
      note: "the executor's model",
    });
    // The provider the run calls takes the default; the one written in kloop.yaml is listed, and said unused.
    expect(valueOf(effective, 'providers.openai-compatible.maxInFlight')).toMatchObject({
      value: 8,
      source: 'default',
    });
    expect(valueOf(effective, 'providers.openai.maxInFlight')).toMatchObject({
      value: 3,
      source: 'kloop.yaml',
      line: 73,
    });
    expect(valueOf(effective, 'providers.openai.maxInFlight').note).toMatch(/no model of this study is on openai/);
    // An llm study lists the llm executor's keys and not the command executor's or the error-driven proposer's.
    const keys = effective.values.map((value) => value.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'executor.apiKeyEnv',
        'executor.temperature',
        'executor.maxOutputTokens',
        'executor.timeoutMs',
      ]),
    );
    for (const key of [
      'executor.command',
      'executor.concurrency',
      'executor.deterministic',
      'proposer.maxEvaluations',
      'proposer.maxScreened',
    ])
      expect(keys).not.toContain(key);
  });

  it('says whether the API key variable is set, never the key', async () => {
    const study = copyOf('intent-llm');
    const unset = await describeEffectiveConfig(study, { env: {} });
    expect(valueOf(unset, 'executor.apiKeyEnv')).toEqual({
      key: 'executor.apiKeyEnv',
      value: 'OPENAI_API_KEY',
      source: 'default',
      note: 'the openai default; OPENAI_API_KEY is not set in the environment',
    });
    const set = await describeEffectiveConfig(study, { env: { OPENAI_API_KEY: 'sk-secret-123' } });
    expect(valueOf(set, 'executor.apiKeyEnv').note).toBe(
      'the openai default; OPENAI_API_KEY is set in the environment',
    );
    expect(JSON.stringify(set)).not.toContain('sk-secret-123');
    // The default of gate.requireCalibration follows --deterministic (temperature 0).
    const deterministic = await describeEffectiveConfig(
      copyOf('intent-llm', (text) => text.replace(/^ {2}requireCalibration: .*$/m, '')),
      { deterministic: true },
    );
    expect(valueOf(deterministic, 'gate.requireCalibration')).toMatchObject({ value: false, source: 'default' });
    expect(valueOf(deterministic, 'gate.incumbentRepeats')).toMatchObject({ value: 5 });
  });

  it('gives the keyword-rules proposer its own defaults, and a configured 0 as 0 from its line', async () => {
    const routing = await describeEffectiveConfig(path.join(EXAMPLES, 'support-routing'));
    expect(valueOf(routing, 'proposer.maxEvaluations')).toMatchObject({ value: 76, source: 'default' });
    expect(valueOf(routing, 'proposer.maxScreened')).toMatchObject({ value: 5000, source: 'default' });
    expect(routing.values.map((value) => value.key)).not.toContain('corpusPolicy.partialGold');
    expect(valueOf(routing, 'schedule.loops.A')).toMatchObject({ value: 'off', source: 'default' });
    const zero = await describeEffectiveConfig(
      copyOf('support-routing', (text) => text.replace(/^( {2}concurrency: 4.*)$/m, '$1\n  maxEvaluations: 0')),
    );
    expect(valueOf(zero, 'proposer.maxEvaluations')).toEqual({
      key: 'proposer.maxEvaluations',
      value: 0,
      source: 'kloop.yaml',
      line: 25,
    });
  });

  it('exits 2 on a missing study, an invalid kloop.yaml or a bad flag, with the JSON error naming file, line and field', async () => {
    expect((await kloop('config', path.join(tmpdir(), 'no-such-kloop-study'))).code).toBe(2);
    const bad = copyOf('intent', (text) => text.replace(/^( {2}concurrency: 4.*)$/m, '$1\n  maxEvaluations: -1'));
    const invalid = await kloop('config', bad, '--json');
    expect(invalid.code).toBe(2);
    const error = (JSON.parse(invalid.stdout) as { error: { code: string; file: string; line: number; field: string } })
      .error;
    expect(error).toMatchObject({ code: 'input.invalid_field', line: 24, field: 'proposer.maxEvaluations' });
    expect(error.file).toMatch(/kloop\.yaml$/);
    expect(invalid.stderr).toMatch(/kloop\.yaml:24: proposer\.maxEvaluations:/);
    expect((await kloop('config', 'examples/intent', '--max-experiments', '-1')).code).toBe(2);
    expect((await kloop('config', 'examples/intent', '--max-experiments', '1.5')).code).toBe(2);
    expect((await kloop('config')).code).toBe(2);
  });
});
