/**
 * `kloop config <study>`: the effective configuration of a study, every value
 * with its source (default, kloop.yaml line, flag). Read-only: it reads
 * kloop.yaml (and a custom task's scorer module, for its weights), never the
 * study database, and calls no model. Exit 0; 2 for a missing study folder, a
 * bad kloop.yaml or a bad flag (file, line and field named).
 * See src/report/effective-config.ts.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { storageOverride } from '../../storage/location.ts';
import { describeEffectiveConfig, formatEffectiveValue, formatSource } from '../../report/effective-config.ts';
import { print, printJson, table } from '../output.ts';

interface ConfigOptions {
  json?: boolean;
  model?: string;
  baseUrl?: string;
  proposerBaseUrl?: string;
  maxCostUsd?: number;
  maxExperiments?: number;
  deterministic?: boolean;
}

export function registerConfigCommand(program: Command): void {
  program
    .command('config')
    .description(
      'Print the effective configuration of a study: every key of kloop.yaml that applies to it, the value a run uses and its source ' +
        '(default, kloop.yaml:<line>, a flag, or an environment variable such as OPENAI_BASE_URL). The flags are those of `kloop run` that replace a kloop.yaml value. ' +
        'Read-only; calls no model. Exit 0; 2 when the study folder, kloop.yaml or a flag is invalid.',
    )
    .argument('<study>', 'study folder')
    .option(
      '--json',
      'print one JSON object on stdout: { study, configPath, values: [{ key, value, source, line?, flag?, variable?, note? }] }',
    )
    .option('--model <provider:model>', 'as `kloop run --model`: replaces executor.model')
    .option(
      '--base-url <url>',
      "as `kloop run --base-url`: replaces executor.baseURL, and proposer.baseURL when the proposer is on the executor's provider or the only model",
    )
    .option('--proposer-base-url <url>', 'as `kloop run --proposer-base-url`: replaces proposer.baseURL')
    .option(
      '--max-cost-usd <usd>',
      'as `kloop run --max-cost-usd`: replaces stopping.maxCostUsd',
      parseNumber('--max-cost-usd', false),
    )
    .option(
      '--max-experiments <n>',
      'as `kloop run --max-experiments`: replaces stopping.maxExperiments',
      parseNumber('--max-experiments', true),
    )
    .option(
      '--deterministic',
      'as `kloop run --deterministic`: an llm executor at temperature 0 is taken as deterministic',
    )
    .addHelpText('after', '\nExample: kloop config examples/intent --json')
    .action(async (studyDir: string, options: ConfigOptions) => {
      if (!existsSync(studyDir)) throw new InputError('the study folder does not exist', { file: studyDir });
      const effective = await describeEffectiveConfig(studyDir, {
        ...(options.model !== undefined ? { model: options.model } : {}),
        ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
        ...(options.proposerBaseUrl !== undefined ? { proposerBaseUrl: options.proposerBaseUrl } : {}),
        ...(options.maxCostUsd !== undefined ? { maxCostUsd: options.maxCostUsd } : {}),
        ...(options.maxExperiments !== undefined ? { maxExperiments: options.maxExperiments } : {}),
        ...(options.deterministic === true ? { deterministic: true } : {}),
        ...(storageOverride() !== undefined ? { db: storageOverride()! } : {}),
      });
      if (options.json === true) {
        printJson(effective);
        return;
      }
      print(`kloop config ${effective.study} (${effective.configPath})`);
      print();
      const rows = effective.values.map((entry) => [
        entry.key,
        formatEffectiveValue(entry.value),
        formatSource(entry),
        entry.note ?? '',
      ]);
      print(table([['key', 'value', 'source', 'note'], ...rows]));
      print();
      print(
        "source: kloop.yaml:<line> = written there; flag = given on this command line; environment = read from that variable; default = kloop's default (the note says which when it depends on the study)",
      );
    });
}

function parseNumber(flag: string, integer: boolean): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0 || (integer && !Number.isInteger(parsed))) {
      throw new InputError(`expected ${integer ? 'a whole number' : 'a number'} ≥ 0, got "${value}"`, { field: flag });
    }
    return parsed;
  };
}
