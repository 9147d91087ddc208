/**
 * The seed's seven steps for turning a workflow into a loop (seeds/002, "How
 * to Apply to a New Domain": identify, seed, define, instrument, loop,
 * analyze, guard), each marked done or left to do for a study `kloop init`
 * just wrote, with the file to edit or the command to run.
 *
 * @module
 */
import type { InitExecutor, InitTask, RenderedStudy } from './templates/common.ts';

/** The smallest seed the seed document asks for ("Seed with 15-25 real examples"). */
export const SEED_EXAMPLES_MIN = 15;
/** The largest of the seed document's range. */
export const SEED_EXAMPLES_MAX = 25;

/** One step: its number (1–7), its name, whether `kloop init` did it, and what is left (or where to change it). */
export interface SeedStep {
  step: number;
  title: string;
  done: boolean;
  /** One sentence naming the file to edit or the command to run. */
  todo: string;
}

/** The seven titles, in the seed's order. */
export const SEED_STEP_TITLES = [
  'pick a metric',
  'seed examples',
  'write program.md',
  'instrument the metric',
  'loop',
  'analyse slowly',
  'guard invariants',
] as const;

/** A folder as a shell reads it: quoted when it holds anything but plain path characters. */
function shellPath(dir: string): string {
  return /^[\w./@%+=:,-]+$/.test(dir) ? dir : `'${dir.replace(/'/g, "'\\''")}'`;
}

/**
 * The seven steps for a study just written.
 *
 * @param study what the template wrote (artifact, sample count, metric)
 * @param options the task, the executor and the folder as the user typed it (for the commands quoted)
 */
export function seedSteps(
  study: RenderedStudy,
  options: { task: InitTask; executor: InitExecutor; dir: string },
): SeedStep[] {
  const dir = shellPath(options.dir);
  const records = study.sampleRecords;
  const seeded = records >= SEED_EXAMPLES_MIN;
  const llm = options.executor === 'llm';
  const proposerNeedsModel = study.proposer === 'reflective' && !llm;
  const steps: Array<Omit<SeedStep, 'step'>> = [
    {
      title: SEED_STEP_TITLES[0],
      done: !study.metricIsSample,
      todo: `${study.metric}: ${study.metricTodo}`,
    },
    {
      title: SEED_STEP_TITLES[1],
      done: seeded,
      todo: `${records} of ${SEED_EXAMPLES_MIN}–${SEED_EXAMPLES_MAX} written: add real records to corpus/examples.yaml (its top comment gives the format), 5 or more in shadow and 3 or more anchors`,
    },
    {
      title: SEED_STEP_TITLES[2],
      done: true,
      todo: 'three registers written (Instructions, Constraints, Stopping criteria): adapt the Instructions to your workflow in program.md',
    },
    llm
      ? {
          title: SEED_STEP_TITLES[3],
          done: false,
          todo: `set executor.model in kloop.yaml (a placeholder now) and the provider's key in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, or executor.apiKeyEnv), then check the scores: kloop eval ${dir}`,
        }
      : {
          title: SEED_STEP_TITLES[3],
          done: true,
          todo:
            options.executor === 'offline'
              ? `scored automatically, offline, by the playbook extractor: check the scores with kloop eval ${dir}`
              : `run.mjs answers from ${study.artifact}, offline (put your own program in kloop.yaml executor.command): check the scores with kloop eval ${dir}`,
        },
    {
      title: SEED_STEP_TITLES[4],
      done: false,
      todo: [
        `kloop run ${dir}`,
        ...(seeded ? [] : [' once step 2 is done']),
        ...(llm ? [`, after kloop calibrate ${dir} measures the model's noise`] : []),
        ...(proposerNeedsModel
          ? ['; the proposer is a language model: set proposer.model in kloop.yaml and its key in the environment']
          : []),
      ].join(''),
    },
    {
      title: SEED_STEP_TITLES[5],
      done: false,
      todo: `after a few runs, not after each: read kloop history ${dir} and kloop report ${dir} --format html, then revise the Instructions in program.md`,
    },
    {
      title: SEED_STEP_TITLES[6],
      done: true,
      todo: 'listed in program.md (Constraints, "The invariants") and checked by code in its yaml block: add what must never change in your workflow',
    },
  ];
  return steps.map((step, index) => ({ step: index + 1, ...step }));
}

/** The steps as lines of text: `[x] 1. pick a metric — …` (done) or `[ ] 2. seed examples — …`. */
export function formatSeedSteps(steps: readonly SeedStep[]): string[] {
  return steps.map((step) => `  [${step.done ? 'x' : ' '}] ${step.step}. ${step.title} — ${step.todo}`);
}
