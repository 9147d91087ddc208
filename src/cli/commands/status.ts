/**
 * `kloop status <study>`: a study at a glance, read-only. It loads the study
 * (the evaluator fingerprint covers the corpus) and reads the notebook; it
 * evaluates nothing, so it imports neither the loop nor the statistics.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { scoreNamesOf } from '../../evaluator/evaluator.ts';
import { createStudyEvaluator } from '../../loop/evaluate-partition.ts';
import { databaseExists, describeLocation, studyDatabaseLocation } from '../../storage/database.ts';
import { getRegistryVersion } from '../../storage/registry.ts';
import { latestCalibration, listCalibrations } from '../../calibration/calibration-store.ts';
import { readStudyState } from '../../loop/study-state.ts';
import { listExperimentDecisions, readLastRun } from '../../storage/notebook/status-queries.ts';
import { formatScore, print, printJson } from '../output.ts';
import type { StudySession } from './study-session.ts';
import { openStudy } from './study-session.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('Show a study at a glance: active version, experiments by decision, calibrations, the last run.')
    .argument('<study>', 'study folder')
    .option('--json', 'print one JSON object on stdout')
    .action(statusCommand);
}

/** `kloop status`'s action: loads the study, reads its notebook (when there is one) and prints it, text or `--json`. */
async function statusCommand(studyDir: string, options: { json?: boolean }): Promise<void> {
  const hasDatabase = await databaseExists(studyDatabaseLocation(path.resolve(studyDir)));
  const session = await openStudy(studyDir, { readonly: true, quiet: true, modelCalls: 'none' });
  try {
    const status = await readStatus(session, hasDatabase);
    if (options.json === true) printJson(status.payload);
    else printStatus(session.study, status, hasDatabase);
  } finally {
    await session.close();
  }
}

/** The status of a study: the `--json` object, and the latest calibration the text describes. */
interface StudyStatus {
  payload: Awaited<ReturnType<typeof statusPayload>>;
  latest: Awaited<ReturnType<typeof latestCalibration>>;
}

/** Reads what `kloop status` shows (nothing from a study without a database yet). */
async function readStatus(session: StudySession, hasDatabase: boolean): Promise<StudyStatus> {
  const { study, db } = session;
  const fingerprint = createStudyEvaluator(study).fingerprint;
  const latest = hasDatabase
    ? await latestCalibration(db, fingerprint, undefined, study.gate.calibrationWindow)
    : undefined;
  return { payload: await statusPayload(session, hasDatabase, fingerprint, latest), latest };
}

/** The `--json` object of `kloop status`. */
async function statusPayload(
  session: StudySession,
  hasDatabase: boolean,
  fingerprint: string,
  latest: Awaited<ReturnType<typeof latestCalibration>>,
) {
  const { study, db } = session;
  const active = hasDatabase ? await getRegistryVersion(db) : undefined;
  const rows = hasDatabase ? await listExperimentDecisions(db) : [];
  const byReason: Record<string, number> = {};
  for (const row of rows) byReason[row.reason] = (byReason[row.reason] ?? 0) + 1;
  const calibrations = hasDatabase ? await listCalibrations(db, fingerprint) : [];
  const lastRun = hasDatabase ? await readLastRun(db) : undefined;
  const state = hasDatabase ? await readStudyState(openNotebook(db)) : undefined;
  return {
    study: study.dir,
    database: hasDatabase ? describeLocation(studyDatabaseLocation(study.dir)) : null,
    fingerprint,
    task: {
      id: study.task.id,
      components: [...scoreNamesOf(study.task).components],
      metrics: [...scoreNamesOf(study.task).metrics],
      weights: study.weights,
      headline: study.headline?.name ?? 'composite',
    },
    executor: study.executor.id,
    proposer: study.proposer.id,
    corpus: {
      optimization: study.partitions.optimization.length,
      anchor: study.partitions.anchor.length,
      shadow: study.partitions.shadow.length,
    },
    activeVersion: active?.id ?? null,
    experiments: rows.filter((row) => row.decision !== 'skipped').length,
    accepted: rows.filter((row) => row.decision === 'accepted').length,
    byReason,
    calibration: latest === undefined ? null : latest.record,
    calibrations,
    calibrationRequired: study.gate.requireCalibration,
    lastRun: lastRun ?? null,
    state: state ?? null,
  };
}

/** `kloop status`'s text. */
function printStatus(study: StudySession['study'], { payload, latest }: StudyStatus, hasDatabase: boolean): void {
  print(`study ${payload.study}`);
  print(`evaluator ${payload.fingerprint} (${payload.executor}); proposer ${payload.proposer}`);
  const weighted = Object.entries(study.weights)
    .filter(([, weight]) => weight > 0)
    .map(([name, weight]) => `${name} ${weight}`);
  print(
    `task ${payload.task.id}: composite of ${weighted.join(', ')}${payload.task.metrics.length > 0 ? `; metrics ${payload.task.metrics.join(', ')}` : ''}${payload.task.headline !== 'composite' ? `; reported as ${payload.task.headline}` : ''}`,
  );
  print(
    `corpus: optimization ${payload.corpus.optimization}, anchor ${payload.corpus.anchor}, shadow ${payload.corpus.shadow}`,
  );
  if (!hasDatabase) {
    print('no study database yet: `kloop run` creates it');
    return;
  }
  print(
    `active version: ${payload.activeVersion ?? '—'}; experiments evaluated ${payload.experiments}, accepted ${payload.accepted}`,
  );
  const byReason = payload.byReason;
  if (Object.keys(byReason).length > 0)
    print(
      `by reason: ${Object.entries(byReason)
        .map(([reason, count]) => `${reason} ${count}`)
        .join(', ')}`,
    );
  print(
    latest === undefined
      ? `calibration: none for this evaluator${study.gate.requireCalibration ? ' (required: run `kloop calibrate`)' : ''}`
      : `calibration: noise SD ${latest.record.noiseSd.toFixed(6)}, Cohen's d ${latest.record.cohensD === null ? '—' : latest.record.cohensD.toFixed(3)}, τ = thresholdK ${study.gate.thresholdK} × rolling max ${formatScore(latest.calibration.noiseSd)} = ${formatScore(study.gate.thresholdK * latest.calibration.noiseSd)} (${latest.record.createdAt}); ${payload.calibrations.length} calibrations of this fingerprint`,
  );
  if (payload.lastRun !== null)
    print(
      `last run: ${payload.lastRun.id}, started ${payload.lastRun.startedAt}, ${payload.lastRun.endedAt === null ? 'did not finish (interrupted or running)' : `stopped: ${payload.lastRun.stopReason}`}`,
    );
}
