/**
 * `kloop doctor`'s check of a study folder against the seed's Quick
 * Checklist (src/doctor/doctor.ts): config, task, program, corpus, metric,
 * schedules, notebook, stopping criteria, and the proposer's fit to the
 * artifact file. Read-only.
 */
import { accessSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PARTITIONS } from '../corpus/example.ts';
import type { Program } from '../program/program.ts';
import { loadProgram } from '../program/program.ts';
import type { StudyConfig } from '../config/config.ts';
import { CONFIG_FILE_NAME, loadStudyConfig } from '../config/config.ts';
import { loadCorpusFiles, resolveStudyCorpus } from '../study/load-study.ts';
import { describeLeak, partitionSizeWarnings } from '../corpus/file-admission.ts';
import { NEAR_DUPLICATE_DISTANCE } from '../corpus/admission.ts';
import type { ComposedTask } from '../study/compose.ts';
import { composeHeadline, composeTask, composeWeights, isIntentStudy, taskKindOf } from '../study/compose.ts';
import { DEFAULT_FAST_CADENCE, DEFAULT_SLOW_CADENCE } from '../config/config.ts';
import { proposerFitProblem } from './proposer-fit.ts';

import type { DoctorFinding } from './doctor-finding.ts';

/** The smallest corpus the seed's checklist accepts ("15–25 seed examples"). */
export const MIN_SEED_EXAMPLES = 15;

export function settle<T>(work: () => T): { ok: true; value: T } | { ok: false; message: string } {
  try {
    return { ok: true, value: work() };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** A finding of the set-up check, before its area is set. */
type Finding = Omit<DoctorFinding, 'area'>;

/** A load step's outcome (see {@link settle}). */
type Settled<T> = { ok: true; value: T } | { ok: false; message: string };

/** `setup.metric`: the task's scorer and weights compose, and what the composite is. */
function metricFindings(config: StudyConfig, composed: Settled<ComposedTask>): Finding[] {
  const found: Finding[] = [];
  const metric = composed.ok
    ? settle(() => ({ task: composed.value.task, weights: composeWeights(composed.value.task, config) }))
    : composed;
  if (!metric.ok) {
    found.push({
      id: 'setup.metric',
      status: 'problem',
      message: metric.message,
      fix: `fix the task or weights in ${CONFIG_FILE_NAME} at the line named`,
    });
  } else {
    const weighted = Object.entries(metric.value.weights)
      .filter(([, weight]) => weight > 0)
      .map(([name]) => name);
    const headline = composeHeadline(metric.value.task);
    const test =
      metric.value.task.outcome === 'binary'
        ? "right/wrong outcomes, McNemar's exact test"
        : 'continuous scores, the paired t-test';
    found.push({
      id: 'setup.metric',
      status: 'ok',
      message:
        `metric identified and automated: the ${taskKindOf(config.task)} scorer's composite (${metric.value.task.id}) over ${weighted.length} weighted component${weighted.length === 1 ? '' : 's'} (${weighted.join(', ')})` +
        `${headline.complement ? `, reported as ${headline.name} (1 − composite)` : ''}; ${test}; executor ${config.executor.kind}${config.executor.model !== undefined ? ` (${config.executor.model})` : ''}`,
    });
  }
  return found;
}

/** `setup.program` and `setup.invariants`: program.md's three registers and the mechanical checks of its Constraints. */
function programFindings(config: StudyConfig): Finding[] {
  const found: Finding[] = [];
  const loadedProgram = settle((): Program => loadProgram(config.program));
  if (!loadedProgram.ok) {
    found.push({
      id: 'setup.program',
      status: 'problem',
      message: loadedProgram.message,
      fix: 'write program.md with three headed registers: Instructions, Constraints (the invariants), Stopping criteria',
    });
  } else {
    const program = loadedProgram.value;
    found.push({
      id: 'setup.program',
      status: 'ok',
      message: `program.md has the three registers (lines ${program.lines.instructions}, ${program.lines.constraints}, ${program.lines.stopping})`,
    });
    const mechanical = program.mechanical;
    const checked =
      (mechanical.editableSections?.length ?? 0) +
      (mechanical.requiredText?.length ?? 0) +
      (mechanical.forbiddenText?.length ?? 0);
    found.push(
      checked > 0
        ? {
            id: 'setup.invariants',
            status: 'ok',
            message: `invariants listed: the Constraints register, with ${checked} mechanical checks code applies to every candidate`,
          }
        : {
            id: 'setup.invariants',
            status: 'info',
            message:
              'invariants listed in prose only: the Constraints register has no mechanical check (editableSections, requiredText, forbiddenText), so code enforces only the length ceiling',
            fix: 'add a ```yaml block to the Constraints register listing what must not change: editableSections (the artifact sections a candidate may edit), requiredText, forbiddenText (`kloop init` writes one for every task)',
          },
    );
  }
  return found;
}

/** `setup.stopping`: kloop.yaml sets a stopping criterion. */
function stoppingFindings(config: StudyConfig, rawConfig: Settled<Record<string, unknown>>): Finding[] {
  const found: Finding[] = [];
  const rawStopping = rawConfig.ok
    ? (rawConfig.value.stopping as Record<string, unknown> | null | undefined)
    : undefined;
  const explicit =
    rawStopping !== undefined && rawStopping !== null && typeof rawStopping === 'object'
      ? Object.keys(rawStopping)
      : [];
  found.push(
    explicit.length > 0
      ? {
          id: 'setup.stopping',
          status: 'ok',
          message: `stopping criteria defined: ${explicit.map((key) => `stopping.${key}`).join(', ')} (and the program's Stopping criteria register)`,
        }
      : {
          id: 'setup.stopping',
          status: 'problem',
          message: `${CONFIG_FILE_NAME} sets no stopping criterion: the run relies on defaults (maxExperiments ${config.stopping.maxExperiments}, plateauRounds ${config.stopping.plateauRounds})`,
          fix: `add a stopping section to ${CONFIG_FILE_NAME} (maxExperiments, plateauRounds, target, maxCostUsd)`,
        },
  );
  return found;
}

/** `setup.corpus`, `setup.seed-examples`, `setup.partitions` and the partitions' leaks and sizes. */
function corpusFindings(config: StudyConfig, composed: Settled<ComposedTask>): Finding[] {
  const found: Finding[] = [];
  const loadedCorpus = composed.ok ? settle(() => loadCorpusFiles(config, composed.value.exampleFormat)) : composed;
  if (!loadedCorpus.ok) {
    found.push({
      id: 'setup.corpus',
      status: 'problem',
      message: loadedCorpus.message,
      fix: 'fix the corpus file at the line and field named',
    });
  } else {
    const corpus = loadedCorpus.value.map((entry) => entry.example);
    const byPartition = Object.fromEntries(
      PARTITIONS.map((name) => [name, corpus.filter((example) => example.partition === name).length]),
    );
    found.push(
      corpus.length >= MIN_SEED_EXAMPLES
        ? {
            id: 'setup.seed-examples',
            status: 'ok',
            message: `${corpus.length} seed examples (${PARTITIONS.map((name) => `${name} ${byPartition[name]}`).join(', ')})`,
          }
        : {
            id: 'setup.seed-examples',
            status: 'problem',
            message: `only ${corpus.length} seed examples; the checklist asks for ${MIN_SEED_EXAMPLES}–25 or more`,
            fix: 'collect more real, labelled examples before running the loop (`kloop corpus add` or the corpus files)',
          },
    );
    const empty = PARTITIONS.filter((name) => byPartition[name] === 0);
    if (empty.length > 0) {
      found.push({
        id: 'setup.partitions',
        status: 'problem',
        message: `no example in the ${empty.join(', ')} partition(s)`,
        fix: 'give every example a partition: optimization, anchor and shadow each need some',
      });
    }
    found.push(...partitionFindings(config, loadedCorpus.value, composed));
  }
  return found;
}

/** The partitions as a run would have them (the corpus lifecycle, admission of new records): leaks and sizes. */
function partitionFindings(
  config: StudyConfig,
  loaded: ReturnType<typeof loadCorpusFiles>,
  composed: Settled<ComposedTask>,
): Finding[] {
  const found: Finding[] = [];
  // The partitions as a run would have them (the corpus lifecycle, admission of new records): leaks and sizes.
  const format = composed.ok ? composed.value.exampleFormat : undefined;
  const state = format === undefined ? undefined : settle(() => resolveStudyCorpus(config, loaded, format));
  if (state !== undefined && state.ok && format !== undefined) {
    const { leaks, partitions } = state.value;
    found.push(
      leaks.length === 0
        ? {
            id: 'setup.partition-leaks',
            status: 'ok',
            message: `no ${format.inputField} is in two partitions (identical or near-duplicate: bigram Jaccard distance < ${NEAR_DUPLICATE_DISTANCE})`,
          }
        : {
            id: 'setup.partition-leaks',
            status: 'problem',
            message: `${leaks.length} ${format.inputField}(s) in two partitions, which leaks one into the other (kloop run refuses to start): ${leaks
              .slice(0, 5)
              .map((leak) => describeLeak(leak, format.inputField))
              .join('; ')}${leaks.length > 5 ? ` (and ${leaks.length - 5} more)` : ''}`,
            fix: 'remove or reword one of each pair in the corpus files, or move one next to the other with `kloop corpus promote`',
          },
    );
    for (const warning of partitionSizeWarnings(partitions, { shadowAlpha: config.gate.shadowAlpha })) {
      found.push({
        id: `setup.partition-size.${warning.partition}`,
        status: 'info',
        message: warning.message,
        fix:
          warning.partition === 'shadow'
            ? 'admit new examples (`kloop corpus add`): they enter the shadow partition'
            : 'mark representative examples `partition: anchor` in the corpus files',
      });
    }
  }
  return found;
}

/** `setup.results-log`: the study database (and its git mirror). */
function resultsLogFinding(config: StudyConfig, hasDatabase: boolean): Finding[] {
  const found: Finding[] = [];
  const git = config.notebook?.git === true ? ', mirrored as git commits in .kloop/notebook (notebook.git)' : '';
  found.push(
    hasDatabase
      ? {
          id: 'setup.results-log',
          status: 'ok',
          message: `results are logged to the study database (.kloop/kloop.db)${git}`,
        }
      : {
          id: 'setup.results-log',
          status: 'info',
          message: `no study database yet: \`kloop run\` creates it${git !== '' ? ` (and the git mirror: notebook.git)` : ''}`,
        },
  );
  return found;
}

/**
 * Checks a study folder against the seed's Quick Checklist. Each load step is
 * tried on its own, so one broken file does not hide the other findings.
 */
export function checkSetup(
  studyDir: string,
  options: { hasDatabase: boolean; composed?: ComposedTask | { error: string } },
): DoctorFinding[] {
  const findings: DoctorFinding[] = [];
  const add = (finding: Omit<DoctorFinding, 'area'>): void => void findings.push({ area: 'setup', ...finding });

  const loadedConfig = settle(() => loadStudyConfig(studyDir));
  if (!loadedConfig.ok) {
    add({
      id: 'setup.config',
      status: 'problem',
      message: loadedConfig.message,
      fix: `fix ${CONFIG_FILE_NAME} at the line named`,
    });
    return findings;
  }
  const config: StudyConfig = loadedConfig.value;
  add({ id: 'setup.config', status: 'ok', message: `${CONFIG_FILE_NAME} is valid` });

  const given = options.composed;
  const composed =
    given === undefined
      ? settle(() => composeTask(config))
      : 'error' in given
        ? { ok: false as const, message: given.error }
        : { ok: true as const, value: given };
  findings.push(...inSetup(metricFindings(config, composed)));

  findings.push(...inSetup(programFindings(config)));

  const rawConfig = settle(
    () => (parseYaml(readFileSync(config.configPath, 'utf8')) as Record<string, unknown> | null) ?? {},
  );
  findings.push(...inSetup(stoppingFindings(config, rawConfig)));

  findings.push(...inSetup(corpusFindings(config, composed)));

  findings.push(...scheduleFindings(config, rawConfig.ok ? rawConfig.value : undefined));

  findings.push(...inSetup(resultsLogFinding(config, options.hasDatabase)));
  return findings;
}

function inSetup(found: readonly Finding[]): DoctorFinding[] {
  return found.map((finding) => ({ area: 'setup', ...finding }));
}

/**
 * The seed's "fast loop schedule set (generation cadence)" and "slow loop
 * schedule set (analysis cadence)": `schedule:` in kloop.yaml, which
 * `kloop schedule` runs (src/schedule/schedule.ts). The fast loop is Loop B, the
 * optimization loop, for every task. The slow loops A, C and D build apps
 * from intents, so they run for intent studies only; for any other task the
 * slow loop is the analysis the seed asks of the people (read `kloop history`
 * and `kloop report` in batches, revise program.md's Instructions), and the
 * finding says so. A note (`info`) when left to the defaults, never a
 * problem: `kloop run` by hand needs no schedule.
 */
function scheduleFindings(config: StudyConfig, raw: Record<string, unknown> | undefined): DoctorFinding[] {
  const written = (raw?.schedule ?? {}) as { fast?: unknown; slow?: unknown; loops?: Record<string, unknown> };
  const schedule = config.schedule;
  const fastSet = written.fast !== undefined || written.loops?.B !== undefined;
  const fast = schedule?.loops.B ?? schedule?.fast ?? DEFAULT_FAST_CADENCE;
  const slow = schedule?.slow ?? DEFAULT_SLOW_CADENCE;
  const intent = isIntentStudy(config);
  const slowSet =
    written.slow !== undefined || (intent && ['A', 'C', 'D'].some((loop) => written.loops?.[loop] !== undefined));
  const fastText =
    fast === 'off'
      ? 'the fast loop (B, optimization) is off (schedule.loops.B)'
      : `the fast loop (B, optimization) runs at "${fast}"${fastSet ? '' : ' (the default)'}`;
  const slowText = intent
    ? `the slow loops (A, C, D: analysis) at "${slow}"${slowSet ? '' : ' (the default)'}`
    : `the slow loop is your analysis: Loops A, C and D build apps from intents and skip a ${taskKindOf(config.task)} study, so read kloop history and kloop report in batches at your own cadence${slowSet ? ` (schedule.slow "${slow}" records it)` : ''} and revise program.md's Instructions`;
  const set = fastSet && (slowSet || !intent);
  return [
    {
      id: 'setup.schedule',
      area: 'setup',
      status: set ? 'ok' : 'info',
      message: `schedule (kloop schedule): ${fastText}; ${slowText}`,
      ...(set
        ? {}
        : {
            fix: `set the cadences in ${CONFIG_FILE_NAME}: schedule: { fast: "0 * * * *"${intent ? ', slow: "0 3 * * 1"' : ''} } (cron; \`kloop schedule\` runs them)`,
          }),
    },
  ];
}

/** `setup.proposer`: the configured proposer reads the artifact file (src/doctor/proposer-fit.ts); none when the config or the file cannot be read (their own findings say so). */
export function proposerFindings(studyDir: string): DoctorFinding[] {
  const config = settle(() => loadStudyConfig(studyDir));
  if (!config.ok || !existsSync(config.value.artifact)) return [];
  const file = path.basename(config.value.artifact);
  const problem = proposerFitProblem(config.value, readFileSync(config.value.artifact, 'utf8'));
  return problem === null
    ? [
        {
          id: 'setup.proposer',
          area: 'setup',
          status: 'ok',
          message: `the ${config.value.proposer.kind} proposer reads ${file}`,
        },
      ]
    : [{ id: 'setup.proposer', area: 'setup', status: 'problem', message: problem.message, fix: problem.fix }];
}

export function canAccess(target: string, mode: number): boolean {
  try {
    accessSync(target, mode);
    return true;
  } catch {
    return false;
  }
}
