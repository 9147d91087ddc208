/**
 * One study builder (issue 32): the same study through the CLI's front end
 * (a study folder, `loadStudyAsync`, what `kloop run` loads) and through the
 * library's (`createStudy`) runs with the same settings, and both are what
 * `kloop config` reports, key by key: weights, gate, stopping, the
 * proposer's round size and concurrency, the seed. Before the builder, a
 * library study with `deterministic: false` ran without the calibration the
 * CLI requires, and asked for 4 candidates a round where the CLI asks for 6.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createStudy, type CreateStudyOptions, type StudyExample } from '../src/api/create-study.ts';
import { describeEffectiveConfig, type EffectiveValue } from '../src/report/effective-config.ts';
import { loadStudyAsync } from '../src/study/load-study.ts';
import type { StudySettings } from '../src/study/study-settings.ts';

const work = mkdtempSync(path.join(tmpdir(), 'kloop-front-ends-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const words = ['apple', 'pear', 'plum', 'fig', 'kiwi', 'lime', 'date', 'lemon'];
const examples: StudyExample<string, string>[] = [
  ...words.map((word, index) => ({
    id: `o${index}`,
    input: `I want ${word}`,
    expected: word,
    partition: 'optimization' as const,
  })),
  { id: 'a0', input: 'one apple for the anchor', expected: 'apple', partition: 'anchor' },
  ...words.slice(0, 6).map((word, index) => ({
    id: `s${index}`,
    input: `give me ${word} now`,
    expected: word,
    partition: 'shadow' as const,
  })),
];
const SCORE_MODULE =
  "export function score(output, expected) { return { pass: output === expected, reason: output === expected ? '' : `expected ${expected}` }; }\n";
const score = (output: unknown, expected: unknown) => ({
  pass: output === expected,
  reason: output === expected ? '' : `expected ${String(expected)}`,
});
const execute = (artifact: string, input: string): string =>
  artifact.split(/\s+/).find((word) => word !== '' && input.includes(word)) ?? 'none';
const calibration = { noiseSd: 0.01, exampleSds: Object.fromEntries(examples.map((example) => [example.id, 0.05])) };

/** The study as a folder `kloop run` reads: a custom scorer, a command executor, kloop.yaml's `extra` lines. */
function studyFolder(name: string, deterministic: boolean, extra: string[]): string {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'score.mjs'), SCORE_MODULE);
  writeFileSync(path.join(dir, 'run.mjs'), "process.stdout.write(JSON.stringify('none'));\n");
  writeFileSync(path.join(dir, 'words.txt'), 'apple\n');
  writeFileSync(
    path.join(dir, 'program.md'),
    '## Instructions\n\nName more fruit.\n\n## Constraints\n\nOne word a line.\n\n## Stopping criteria\n\nThe defaults.\n',
  );
  writeFileSync(
    path.join(dir, 'corpus.jsonl'),
    `${examples.map((example) => JSON.stringify({ ...example, tags: [] })).join('\n')}\n`,
  );
  writeFileSync(
    path.join(dir, 'kloop.yaml'),
    [
      'task: { kind: custom, module: score.mjs }',
      `executor: { kind: command, command: [node, run.mjs], deterministic: ${deterministic} }`,
      'artifact: words.txt',
      'corpus: corpus.jsonl',
      ...extra,
      '',
    ].join('\n'),
  );
  return dir;
}

/** The setting a `kloop config` key names, read from composed settings (null when a stop is not set). */
function settingOf(settings: StudySettings, key: string): unknown {
  const [section, name] = key.split('.') as [string, string | undefined];
  if (key === 'proposer.candidatesPerRound') return settings.candidatesPerRound;
  if (key === 'proposer.concurrency') return settings.concurrency;
  if (key === 'seed') return settings.seed;
  if (section === 'weights') return settings.weights[name!];
  if (section === 'gate') return (settings.gate as Record<string, unknown>)[name!] ?? null;
  if (section === 'stopping') return (settings.stopping as unknown as Record<string, unknown>)[name!] ?? null;
  throw new Error(`no setting for ${key}`);
}

/**
 * `kloop config` keys that are run settings of both front ends. Left out: the
 * executor's and the corpus's keys (the library takes functions and
 * examples), the calibration's (`kloop calibrate`: gate.minCohensD,
 * noiseRepeats, signalRepeats), `gate.racing` (reported as written; the
 * composed racing settings are compared whole below) and
 * `stopping.maxCostUsd` (the CLI's model budget).
 */
const COMPARED = [
  'proposer.candidatesPerRound',
  'proposer.concurrency',
  'gate.alpha',
  'gate.shadowAlpha',
  'gate.repeats',
  'gate.generalizationRatio',
  'gate.shadowMarginSe',
  'gate.anchorTolerance',
  'gate.minDeltaDistance',
  'gate.thresholdK',
  'gate.anchorK',
  'gate.calibrationWindow',
  'gate.incumbentRepeats',
  'gate.requireCalibration',
  'stopping.maxExperiments',
  'stopping.plateauRounds',
  'stopping.plateauMinSpent',
  'stopping.idleRounds',
  'stopping.target',
  'stopping.maxConsecutiveFailures',
  'stopping.maxFailureRate',
  'stopping.maxRounds',
  'seed',
  'weights.score',
];

async function bothFrontEnds(
  name: string,
  deterministic: boolean,
  yaml: string[],
  library: Partial<CreateStudyOptions<string, string, string>>,
) {
  const dir = studyFolder(name, deterministic, yaml);
  const cli = await loadStudyAsync(dir);
  const study = await createStudy<string, string, string>({
    storage: path.join(work, `${name}-library`),
    artifact: 'apple\n',
    examples,
    score,
    outcome: 'binary',
    execute,
    deterministic,
    proposer: () => [],
    ...library,
  });
  await study.close();
  const effective = await describeEffectiveConfig(dir);
  return { cli, library: study.settings, effective: effective.values };
}

function compareKeyByKey(cli: StudySettings, library: StudySettings, effective: readonly EffectiveValue[]): void {
  const compared = effective.filter((entry) => COMPARED.includes(entry.key));
  expect(compared.map((entry) => entry.key).sort()).toEqual([...COMPARED].sort());
  for (const entry of compared) {
    expect({ key: entry.key, cli: settingOf(cli, entry.key), library: settingOf(library, entry.key) }).toEqual({
      key: entry.key,
      cli: entry.value,
      library: entry.value,
    });
  }
}

describe('the CLI and the library build a study with the same settings', () => {
  it('a deterministic workflow, every default', async () => {
    const { cli, library, effective } = await bothFrontEnds('deterministic', true, [], {});
    compareKeyByKey(cli, library, effective);
    const settings = {
      weights: cli.weights,
      gate: cli.gate,
      stopping: cli.stopping,
      candidatesPerRound: cli.candidatesPerRound,
      concurrency: cli.concurrency,
      seed: cli.seed,
    };
    expect(library).toEqual(settings);
    expect(library).toMatchObject({
      candidatesPerRound: 6,
      concurrency: 4,
      seed: 1,
      gate: { requireCalibration: false, incumbentRepeats: 1 },
    });
    expect(library.gate.racing).toBeUndefined();
  });

  it('a workflow that samples: calibration required and racing on in both, by default', async () => {
    const { cli, library, effective } = await bothFrontEnds('sampling', false, [], { calibration });
    compareKeyByKey(cli, library, effective);
    expect(library).toEqual({
      weights: cli.weights,
      gate: cli.gate,
      stopping: cli.stopping,
      candidatesPerRound: cli.candidatesPerRound,
      concurrency: cli.concurrency,
      seed: cli.seed,
    });
    expect(library.gate).toMatchObject({
      requireCalibration: true,
      incumbentRepeats: 4,
      racing: { batchSize: expect.any(Number) },
    });
  });

  it('the same keys written in kloop.yaml and given in code', async () => {
    const { cli, library, effective } = await bothFrontEnds(
      'written',
      false,
      [
        'proposer: { candidatesPerRound: 3, concurrency: 2 }',
        'gate: { alpha: 0.1, repeats: 3, requireCalibration: false, racing: false }',
        'stopping: { maxExperiments: 9, target: 0.9, maxRounds: 4 }',
        'seed: 7',
        'weights: { score: 2 }',
      ],
      {
        candidatesPerRound: 3,
        concurrency: 2,
        gate: { alpha: 0.1, repeats: 3, requireCalibration: false, racing: false },
        stopping: { maxExperiments: 9, target: 0.9, maxRounds: 4 },
        seed: 7,
        weights: { score: 2 },
      },
    );
    compareKeyByKey(cli, library, effective);
    expect(library).toEqual({
      weights: cli.weights,
      gate: cli.gate,
      stopping: cli.stopping,
      candidatesPerRound: cli.candidatesPerRound,
      concurrency: cli.concurrency,
      seed: cli.seed,
    });
    expect(library).toMatchObject({
      candidatesPerRound: 3,
      seed: 7,
      weights: { score: 2 },
      gate: { alpha: 0.1, requireCalibration: false, incumbentRepeats: 12 },
      stopping: { maxExperiments: 9, target: 0.9, maxRounds: 4 },
    });
  });

  it('a library study that samples, without a calibration, is refused as kloop run refuses it', async () => {
    const error = await createStudy({
      storage: path.join(work, 'uncalibrated'),
      artifact: 'apple\n',
      examples,
      score,
      execute,
      deterministic: false,
      proposer: () => [],
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'input', field: 'gate.requireCalibration' });
    expect((error as Error).message).toMatch(
      /true by default for an executor that is not deterministic.*no calibration was given.*requireCalibration: false/,
    );
  });
});
