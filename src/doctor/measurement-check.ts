/**
 * `kloop doctor`'s checks that measure (src/doctor/doctor.ts): the incumbent
 * evaluated on every partition (the seed's "metric scraper built and
 * tested") and the power check `kloop run` makes before round 1.
 */
import { readFileSync } from 'node:fs';
import { PARTITIONS } from '../corpus/example.ts';
import { isKloopError } from '../errors.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { countStoredOutcomes } from '../storage/notebook/doctor-queries.ts';
import type { StudyConfig } from '../config/config.ts';
import { loadStudyConfig } from '../config/config.ts';
import { checkPromptTemplate, loadCorpus, loadStudyAsync } from '../study/load-study.ts';
import type { Proposer } from '../proposers/proposer.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import { openDatabase } from '../storage/database.ts';
import type { PowerWarning } from '../calibration/power-check.ts';
import { notebookPowerWarnings, studyPowerWarnings } from '../calibration/power-check.ts';
import type { ComposedTask } from '../study/compose.ts';
import { composeTaskAsync } from '../study/compose.ts';

import type { DoctorFinding } from './doctor-finding.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/** A proposer for a study loaded only to evaluate its incumbent: the doctor proposes nothing. */
const NO_PROPOSER: Proposer = {
  id: 'doctor (proposes nothing)',
  propose: () => Promise.reject(new Error('kloop doctor proposes nothing')),
};

/** Where {@link checkMeasurement} finds the study's notebook. */
export interface MeasurementCheckOptions {
  databaseFile: string;
  hasDatabase: boolean;
  openReadOnly: (file: string) => Promise<StudyDatabase>;
}

/**
 * The checks that measure: the seed's "metric scraper built and tested"
 * (`setup.instrument`: the incumbent — the active version in the database,
 * else the seed artifact — is evaluated on every partition and its outputs
 * are valid) and the power check `kloop run` makes before round 1
 * (`setup.power`, src/calibration/power-check.ts).
 *
 * The executor runs in memory (results stored in a scratch database, not the
 * study's: nothing is written). An `llm` executor would mean paid model
 * calls: the doctor reads the incumbent's stored evaluations instead, and
 * leaves a binary task's power check to `kloop run`.
 *
 * Power findings are notes (`info`): the study runs, but the gate cannot
 * accept a change until the partitions grow. An instrument that gives no
 * valid output at all is a problem.
 */
/** Adds one finding of the measurement check. */
type AddFinding = (
  id: 'setup.instrument' | 'setup.power',
  status: DoctorFinding['status'],
  message: string,
  fix?: string,
) => void;

/** What both ways of measuring read: the study, its notebook (if any) and the incumbent, and where the findings go. */
interface MeasurementContext {
  studyDir: string;
  config: StudyConfig;
  composed: Awaited<ReturnType<typeof composeTaskAsync>>;
  binary: boolean;
  db: StudyDatabase | undefined;
  incumbent: { id: number; hash: string; text: string } | undefined;
  /** The incumbent as the messages name it. */
  what: string;
  add: AddFinding;
  findings: DoctorFinding[];
}

/** A model executor: the prompt template checked, the incumbent's stored outputs counted, the power check from the notebook (no model call). */
async function modelMeasurement(context: MeasurementContext): Promise<void> {
  const { studyDir, config, composed, binary, db, incumbent, what, add, findings } = context;
  // The prompt template, as the study's load checks it: every placeholder well formed and filled by every example.
  try {
    checkPromptTemplate(config, readFileSync(config.artifact, 'utf8'), loadCorpus(config, composed.exampleFormat));
  } catch (error) {
    add(
      'setup.instrument',
      'problem',
      `instrument broken: ${(error as Error).message}`,
      'fix the placeholder in the prompt: {{input}}, {{input.<field>}} or {{<field>}} of a field every example has',
    );
    return;
  }
  const stored =
    db === undefined || incumbent === undefined ? undefined : await countStoredOutcomes(db, incumbent.hash);
  if (stored === undefined || stored.total === 0) {
    add(
      'setup.instrument',
      'info',
      `instrument: not tested yet — ${what} has no stored evaluation, and the doctor makes no model calls`,
      `kloop eval ${studyDir} runs the executor once on every example and shows the scores`,
    );
  } else {
    add(
      'setup.instrument',
      stored.valid === 0 ? 'problem' : stored.valid < stored.total ? 'info' : 'ok',
      `instrument tested: ${stored.valid} of ${stored.total} stored outputs of ${what} are valid`,
      stored.valid < stored.total
        ? `kloop eval ${studyDir} --json names each invalid output and why (no answer, unreadable, off the task's output schema)`
        : undefined,
    );
  }
  if (binary)
    add(
      'setup.power',
      'info',
      "power check: left to `kloop run`, which makes it before round 1 (it evaluates the incumbent, and this study's executor calls a model)",
    );
  else if (db !== undefined)
    findings.push(
      ...powerFindings(await notebookPowerWarnings(db, partitionSizes(config, composed.exampleFormat)), false, config),
    );
  else findings.push(...powerFindings([], false, config));
}

/** Any other executor: the incumbent evaluated on every partition into a scratch database, then the power check. */
async function executedMeasurement(context: MeasurementContext): Promise<void> {
  const { studyDir, config, binary, db, incumbent, what, add, findings } = context;
  const study = await loadStudyAsync(studyDir, { createProposer: () => NO_PROPOSER });
  const incumbentText = incumbent?.text ?? study.artifactText;
  const scratch = await openDatabase(':memory:');
  try {
    const evaluator = createStudyEvaluator(study, openNotebook(scratch));
    let total = 0;
    let valid = 0;
    const reasons = new Map<string, number>();
    for (const partition of PARTITIONS) {
      const score = await evaluatePartition(evaluator, study, incumbentText, partition);
      total += score.total;
      valid += score.total - score.invalid;
      for (const record of score.examples)
        if (!record.valid) reasons.set(record.invalidReason, (reasons.get(record.invalidReason) ?? 0) + 1);
    }
    const invalid = [...reasons]
      .sort((left, right) => right[1] - left[1])
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ');
    add(
      'setup.instrument',
      valid === 0 ? 'problem' : valid < total ? 'info' : 'ok',
      `instrument ${valid === 0 ? 'broken' : 'tested'}: the ${study.executor.id} executor scored ${what} on all ${total} ${study.gate.repeats > 1 ? `example-runs (${study.gate.repeats} repeats)` : 'examples'}, ${valid} valid${invalid !== '' ? ` (invalid: ${invalid})` : ''}`,
      valid < total
        ? `kloop eval ${studyDir} --json names each invalid output and why; fix the executor${config.executor.kind === 'command' ? ' program (executor.command)' : ''} or the artifact`
        : undefined,
    );
    const warnings = await studyPowerWarnings({ study, evaluator, incumbentText, ...(db !== undefined ? { db } : {}) });
    if (warnings.length === 0) {
      add(
        'setup.power',
        'ok',
        binary
          ? `power: ${what} gets enough examples wrong on optimization and shadow for McNemar's exact test to accept a change (α = ${study.gate.alpha}, shadow α = ${study.gate.shadowAlpha})`
          : 'power: no refused candidate so far shows the optimization partition too small for the effects measured',
      );
    } else findings.push(...powerFindings(warnings, binary, config));
  } finally {
    await scratch.destroy();
  }
}

export async function checkMeasurement(studyDir: string, options: MeasurementCheckOptions): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  const add = (
    id: 'setup.instrument' | 'setup.power',
    status: DoctorFinding['status'],
    message: string,
    fix?: string,
  ): void => void findings.push({ id, area: 'setup', status, message, ...(fix !== undefined ? { fix } : {}) });
  const config = loadStudyConfig(studyDir);
  const composed = await composeTaskAsync(config);
  const binary = composed.task.outcome === 'binary';
  const model = config.executor.kind === 'llm';
  let db: StudyDatabase | undefined;
  try {
    db = options.hasDatabase ? await options.openReadOnly(options.databaseFile) : undefined;
    const incumbent = db !== undefined ? await getRegistryVersion(db) : undefined;
    const what = incumbent !== undefined ? `the incumbent (version ${incumbent.id})` : 'the seed artifact';
    const context: MeasurementContext = { studyDir, config, composed, binary, db, incumbent, what, add, findings };
    if (model) await modelMeasurement(context);
    else await executedMeasurement(context);
    return findings;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A database that cannot be read is the database findings' to report (database.open).
    const storage = isKloopError(error) && error.code.startsWith('storage');
    if (!findings.some((finding) => finding.id === 'setup.instrument')) {
      if (storage)
        add('setup.instrument', 'info', `instrument not tested: the study database cannot be read (${message})`);
      else
        add(
          'setup.instrument',
          'problem',
          `instrument: the study cannot be evaluated: ${message}`,
          'fix what the message names; `kloop eval` shows the same',
        );
    }
    add('setup.power', 'info', `power check skipped: ${message}`);
    return findings;
  } finally {
    await db?.destroy();
  }
}

/** The warnings as findings, each with what to add. */
function powerFindings(warnings: readonly PowerWarning[], binary: boolean, config: StudyConfig): DoctorFinding[] {
  if (warnings.length === 0) {
    return [
      {
        id: 'setup.power',
        area: 'setup',
        status: 'ok',
        message:
          'power: no refused candidate so far shows the optimization partition too small for the effects measured',
      },
    ];
  }
  return warnings.map((warning) => ({
    id: 'setup.power',
    area: 'setup',
    status: 'info',
    message: `power: ${warning.message}`,
    fix: binary
      ? `add ${warning.partition} examples the incumbent gets wrong (kloop corpus add ${config.dir}, or the corpus files; new examples enter shadow) until it gets at least ${warning.needed} wrong; until then the gate cannot accept a change`
      : `add optimization examples until it has about ${warning.needed} (kloop corpus add ${config.dir}, or the corpus files; they enter shadow and graduate)`,
  }));
}

/** The gate's levels and the partition sizes of the corpus files, for a power check that loads no executor. */
function partitionSizes(
  config: StudyConfig,
  format: ComposedTask['exampleFormat'],
): { alpha: number; shadowAlpha: number; optimizationSize: number; shadowSize: number } {
  const corpus = loadCorpus(config, format);
  const size = (name: string): number => corpus.filter((example) => example.partition === name).length;
  return {
    alpha: config.gate.alpha,
    shadowAlpha: config.gate.shadowAlpha,
    optimizationSize: size('optimization'),
    shadowSize: size('shadow'),
  };
}
