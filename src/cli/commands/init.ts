/**
 * `kloop init <dir> --task intent|classification|extraction|custom
 * [--executor llm|command|offline] [--force] [--json]`: writes a study folder
 * that runs (src/init/), then prints the seed's seven steps, each done or
 * left to do with the file to edit (docs/init.md).
 *
 * Exit codes: 0 written; 2 bad input or usage (an unknown task or executor,
 * `offline` for a task other than intent, a folder that is not empty without
 * `--force`), nothing written; 1 a file could not be written.
 */
import { type Command, Option } from 'commander';
import { InputError } from '../../errors.ts';
import {
  defaultExecutor,
  INIT_EXECUTORS,
  INIT_TASKS,
  type InitExecutor,
  type InitTask,
  planStudy,
  writeStudy,
} from '../../init/init-study.ts';
import { formatSeedSteps, seedSteps } from '../../init/seed-steps.ts';
import { print, printJson } from '../output.ts';

interface InitCommandOptions {
  task: InitTask;
  executor?: InitExecutor;
  force?: boolean;
  json?: boolean;
}

const HELP_AFTER = `
Tasks and their executors (the default first):
  intent          offline (the playbook extractor, no API key), llm, command
  classification  llm, command (run.mjs routes by the keyword rules in rules.json)
  extraction      llm, command (run.mjs reads the fields by the patterns in rules.json)
  custom          llm, command; your metric in score.ts

Written: kloop.yaml (task, executor, proposer, gate, stopping, with comments),
program.md (Instructions, Constraints with the invariants, Stopping criteria),
the artifact (playbook.yaml, prompt.md with {{input}}, or rules.json and run.mjs),
corpus/examples.yaml (sample records; its top comment gives the format and the
partitions), score.ts for custom, and .gitignore. Then the seed's seven steps,
each done or left to do.

Exit codes: 0 written; 2 bad input or usage (an unknown task, offline for a task
other than intent, a folder that is not empty without --force): nothing written.
Examples:
  kloop init tickets --task classification --executor command
  kloop init invoices --task extraction
  kloop init triage --task custom --executor command --json
See docs/init.md.`;

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description(
      "Write a new study folder that runs: kloop.yaml, program.md (three registers and the invariants), the artifact, a sample corpus and, for a custom metric, score.ts; then print the seed's seven steps, each done or left to do.",
    )
    .argument('<dir>', 'the study folder to write (created; it must be absent or empty unless --force)')
    .addOption(new Option('--task <kind>', 'what the study measures').choices(INIT_TASKS).makeOptionMandatory())
    .addOption(
      new Option(
        '--executor <kind>',
        'what runs the artifact: llm (a prompt template), command (a program), offline (intent only); default offline for intent, llm otherwise',
      ).choices(INIT_EXECUTORS),
    )
    .option(
      '--force',
      "write into a folder that is not empty: the study's files replace those of the same name, other files are kept",
    )
    .option('--json', 'print one JSON object on stdout: { dir, task, executor, files, steps }')
    .addHelpText('after', HELP_AFTER)
    .action((dir: string, options: InitCommandOptions) => {
      // An empty path would write into the current folder, and no later command could name the study.
      if (dir.trim() === '')
        throw new InputError('the study folder must be named (got an empty path)', { field: '<dir>' });
      const plan = planStudy({ task: options.task, executor: options.executor ?? defaultExecutor(options.task) });
      const written = writeStudy(dir, plan.files, { force: options.force === true });
      const steps = seedSteps(plan.study, { task: plan.task, executor: plan.executor, dir });
      if (options.json === true) {
        printJson({ dir: written.dir, task: plan.task, executor: plan.executor, files: written.files, steps });
        return;
      }
      print(
        `kloop init: wrote ${/^[aeiou]/.test(plan.task) ? 'an' : 'a'} ${plan.task} study (executor ${plan.executor}) in ${written.dir}`,
      );
      for (const file of written.files) print(`  ${file}${written.overwritten.includes(file) ? '  (replaced)' : ''}`);
      print();
      print("The seed's seven steps ([x] done, [ ] left to do):");
      for (const line of formatSeedSteps(steps)) print(line);
    });
}
