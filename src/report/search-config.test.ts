/** `proposer.kind: search` in kloop.yaml: its space is validated with file, line and field; the proposer is composed for YAML/JSON artifacts only. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { composeProposer, composeTask } from '../study/compose.ts';
import { loadStudyConfig } from '../config/config.ts';
import { describeEffectiveConfig } from './effective-config.ts';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function study(config: string, artifact = 'hyperparams.yaml'): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-search-config-'));
  directories.push(directory);
  writeFileSync(path.join(directory, 'kloop.yaml'), config);
  writeFileSync(path.join(directory, artifact), 'trees: 2\n');
  writeFileSync(path.join(directory, 'score.mjs'), 'export function score(output) { return output.accuracy; }\n');
  writeFileSync(path.join(directory, 'program.md'), '# Instructions\na\n# Constraints\nb\n# Stopping criteria\nc\n');
  mkdirSync(path.join(directory, 'corpus'));
  writeFileSync(path.join(directory, 'corpus', 'a.yaml'), '[]\n');
  return directory;
}

const head = (artifact = 'hyperparams.yaml'): string =>
  `task: { kind: classification, labels: [a, b] }\nexecutor: { kind: command, command: [node, train.mjs] }\nartifact: ${artifact}\ncorpus: [corpus/*.yaml]\n`;

function thrown(action: () => unknown): InputError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError');
}

describe('proposer.kind: search in kloop.yaml', () => {
  it('reads the space and the sampler settings', () => {
    const config = loadStudyConfig(
      study(
        `${head()}proposer:\n  kind: search\n  startupTrials: 4\n  tpe: false\n  space:\n    trees: { type: int, low: 1, high: 64, log: true }\n    rate: { type: float, low: 0.01, high: 1 }\n    kind: { type: choice, choices: [a, b] }\n`,
      ),
    );
    expect(config.proposer).toEqual({
      kind: 'search',
      candidatesPerRound: 6,
      concurrency: 4,
      startupTrials: 4,
      tpe: false,
      space: {
        trees: { type: 'int', low: 1, high: 64, log: true },
        rate: { type: 'float', low: 0.01, high: 1, log: false },
        kind: { type: 'choice', choices: ['a', 'b'] },
      },
    });
    expect(composeProposer(config, composeTask(config).task).id).toBe('search@1:random');
  });

  it('refuses a bad space naming file, line and field', () => {
    const cases: Array<[string, string, number, RegExp]> = [
      ['proposer:\n  kind: search\n', 'proposer.space', 6, /the search proposer needs proposer.space/],
      [
        'proposer:\n  kind: search\n  space:\n    trees: { type: int, low: 8, high: 2 }\n',
        'proposer.space.trees.high',
        8,
        /high must be above low/,
      ],
      [
        'proposer:\n  kind: search\n  space:\n    rate: { type: float, low: 0, high: 1, log: true }\n',
        'proposer.space.rate.low',
        8,
        /a log-scale range needs low > 0/,
      ],
      [
        'proposer:\n  kind: search\n  space:\n    trees: { type: int, low: 1.5, high: 4 }\n',
        'proposer.space.trees.low',
        8,
        /expected an integer/,
      ],
      [
        'proposer:\n  kind: search\n  space:\n    kind: { type: choice, choices: [a] }\n',
        'proposer.space.kind.choices',
        8,
        /at least two choices/,
      ],
      [
        'proposer:\n  kind: search\n  space:\n    trees: { type: range, low: 1, high: 4 }\n',
        'proposer.space.trees.type',
        8,
        /./,
      ],
      ['proposer:\n  kind: error-driven\n  tpe: false\n', 'proposer.tpe', 7, /tpe applies to the search proposer only/],
    ];
    for (const [yaml, field, line, message] of cases) {
      const error = thrown(() => loadStudyConfig(study(`${head()}${yaml}`)));
      expect(error.file, yaml).toMatch(/kloop\.yaml$/);
      expect(error.field, yaml).toBe(field);
      expect(error.line, yaml).toBe(line);
      expect(error.detail, yaml).toMatch(message);
    }
  });

  it('refuses an artifact that is not YAML or JSON, naming proposer.kind', () => {
    const config = loadStudyConfig(
      study(
        `${head('params.txt')}proposer:\n  kind: search\n  space:\n    trees: { type: int, low: 1, high: 4 }\n`,
        'params.txt',
      ),
    );
    const error = thrown(() => composeProposer(config, composeTask(config).task));
    expect(error.field).toBe('proposer.kind');
    expect(error.detail).toBe(
      "the search proposer sets parameters in a YAML or JSON artifact (.yaml, .yml, .json); this study's artifact is params.txt",
    );
  });

  it('kloop config shows the search settings and their defaults', async () => {
    const { values } = await describeEffectiveConfig(
      study(`${head()}proposer:\n  kind: search\n  space:\n    trees: { type: int, low: 1, high: 4 }\n`),
    );
    const byKey = new Map(values.map((value) => [value.key, value]));
    expect(byKey.get('proposer.startupTrials')).toMatchObject({ value: 6, source: 'default' });
    expect(byKey.get('proposer.gamma')).toMatchObject({ value: 0.25, source: 'default' });
    expect(byKey.get('proposer.tpe')).toMatchObject({ value: true, source: 'default' });
    expect(byKey.get('proposer.space.trees')).toEqual({
      key: 'proposer.space.trees',
      value: { type: 'int', low: 1, high: 4, log: false },
      source: 'kloop.yaml',
      line: 8,
    });
  });
});
