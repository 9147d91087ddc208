/**
 * One step of an online study's slow loop (`kloop run` on a `mode: online`
 * study, and each slow cadence of `--simulate`):
 *
 * 1. the first step stores the seed version and starts the **A/A
 *    calibration** (the incumbent against itself): once both arms have
 *    `windows.minUnitsPerArm` units whose attribution window has closed, its
 *    sample-ratio check proves the pipeline (assignment, exposure log) and
 *    its per-unit noise gives τ (`calibrationTau`, the rolling maximum over
 *    the last 5 calibrations); a sample-ratio mismatch stops the study
 *    (`calibration_invalid`, exit 1): nothing it would measure is a result;
 * 2. the running A/B experiment is looked at with the online gate
 *    (`decideOnline`, src/online/gate/online-gate.ts) on the units whose
 *    attribution windows have closed: accepted (the candidate becomes the
 *    active version), refused (its reason), moved to its confirmation window
 *    (the decision window's primary statistics are frozen; later units are
 *    fresh), or ramped up one step (`metrics.rampEvery` passed, no harm);
 * 3. with no experiment running, the proposer is asked for the next variant
 *    from the decided experiments (their ideas and decision windows only,
 *    never a confirmation window) and it starts; with none left, or
 *    `stopping.maxExperiments` spent, the study stops and assigns no more.
 *
 * Everything is read from and written to the notebook, so a resumed study
 * re-uses every stored exposure and outcome.
 */
import type { StudyDatabase } from '../../storage/study-database.ts';
import type { OnlineExperimentRecord } from '../../storage/online-store.ts';
import {
  listOnlineExperiments,
  readOnlineState,
  recordOnlineLook,
  runningOnlineExperiment,
  startOnlineExperiment,
  updateOnlineExperiment,
  writeOnlineState,
} from '../../storage/online-store.ts';
import { getRegistryVersion, getVersion, putVersion, setRegistryVersion } from '../../storage/registry.ts';
import { loadProgram } from '../../program/program.ts';
import { BudgetExceededError } from '../../providers/budget.ts';
import { readFileSync } from 'node:fs';
import type { OnlineStudyConfig } from '../config.ts';
import { alwaysValidPValues, calibrationTau, decideOnline } from '../gate/online-gate.ts';
import type { ArmPair, OnlineGateDecision, OnlineGateInput } from '../types.ts';
import type { OnlineProposer } from '../proposers/ideas-proposer.ts';
import { ONLINE_STOPPED_KEY, type OnlineStudy } from './online-study.ts';
import { describeStandings, type ExperimentStanding } from './standing.ts';
import { lookRecord } from './look-record.ts';
import type { OnlineStopReason } from './stop-reasons.ts';
import { gateInput, gateSettings, runningMinimum, type StoredEvidence } from './slow-loop-gate.ts';

export { ONLINE_CALIBRATION_WINDOW } from './slow-loop-gate.ts';

/** What one slow-loop step did and where every experiment stands. */
export interface SlowLoopReport {
  /** ISO time of the step (the study's clock). */
  at: string;
  /** Experiments decided in this step: id, outcome (`accepted`, `refused`, `invalid`, `calibrated`) and reason. */
  decided: { id: number; status: string; reason: string | null }[];
  /** Experiments started in this step. */
  started: number[];
  /** Every experiment, oldest first. */
  experiments: ExperimentStanding[];
  /** The active version's id. */
  activeVersionId: number | null;
  /** Set once the study has stopped (this step or before). */
  stopped?: { reason: OnlineStopReason; detail: string; at: string };
}

/** Runs one slow-loop step (see the module's description). */
export async function runSlowLoopStep(study: OnlineStudy, proposer: OnlineProposer): Promise<SlowLoopReport> {
  const { db, config } = study;
  const at = study.now().toISOString();
  const report: SlowLoopReport = { at, decided: [], started: [], experiments: [], activeVersionId: null };
  const stoppedBefore = await readOnlineState(db, ONLINE_STOPPED_KEY);
  if (stoppedBefore === undefined) {
    const incumbent = await ensureSeed(db, config, study.now);
    let running = await runningOnlineExperiment(db);
    if (running === undefined && (await listOnlineExperiments(db)).length === 0) {
      running = await startOnlineExperiment(db, {
        kind: 'aa',
        incumbentVersionId: incumbent,
        candidateVersionId: incumbent,
        rationale: 'A/A calibration: the incumbent against itself',
        proposer: 'calibration',
        at,
      });
      report.started.push(running.id);
    } else if (running !== undefined) {
      const status = await lookAt(study, running, at);
      if (status !== undefined)
        report.decided.push({ id: running.id, status, reason: (await experimentById(db, running.id)).reason });
      if (status === 'invalid' && running.kind === 'aa')
        await stop(
          db,
          'calibration_invalid',
          `the A/A calibration (experiment ${running.id}) failed its sample-ratio check: assignment or exposure logging is broken`,
          at,
        );
      else if (status !== undefined) await startNext(study, proposer, report, at);
    } else {
      await startNext(study, proposer, report, at);
    }
  }
  study.refresh();
  return { ...(await currentReport(study)), decided: report.decided, started: report.started };
}

/** Where the study stands now, as a report of a step that decided and started nothing (the end of `kloop schedule`). */
export async function currentReport(study: OnlineStudy): Promise<SlowLoopReport> {
  const at = study.now().toISOString();
  const stopped = await readOnlineState(study.db, ONLINE_STOPPED_KEY);
  return {
    at,
    decided: [],
    started: [],
    experiments: await describeStandings(study.db, study.config, at),
    activeVersionId: (await getRegistryVersion(study.db))?.id ?? null,
    ...(stopped === undefined ? {} : { stopped: JSON.parse(stopped) as NonNullable<SlowLoopReport['stopped']> }),
  };
}

async function experimentById(db: StudyDatabase, id: number): Promise<OnlineExperimentRecord> {
  return (await listOnlineExperiments(db)).find((experiment) => experiment.id === id)!;
}

/** Records the stop of the study: it assigns no more units. */
export async function stop(db: StudyDatabase, reason: OnlineStopReason, detail: string, at: string): Promise<void> {
  await writeOnlineState(db, ONLINE_STOPPED_KEY, JSON.stringify({ reason, detail, at }));
}

/** The active version's id, storing the artifact file as the seed on the first step. */
async function ensureSeed(db: StudyDatabase, config: OnlineStudyConfig, now: () => Date): Promise<number> {
  const active = await getRegistryVersion(db);
  if (active !== undefined) return active.id;
  const text = readFileSync(config.artifact, 'utf8');
  return db.transaction().execute(async (transaction) => {
    const version = await putVersion(transaction, text, 'seed', null, null, now);
    await setRegistryVersion(transaction, version.id, 'seed', 'active', now);
    await setRegistryVersion(transaction, version.id, 'seed', 'seed', now);
    return version.id;
  });
}

/**
 * `slow`: a look that may decide (accept, refuse, open the confirmation
 * window, calibrate). `fast`: a look of the fast loop, which acts only on
 * what cannot wait — a harm stop, a sample-ratio mismatch, a ramp step — and
 * leaves any other decision to the slow loop (`ripe`, nothing recorded).
 */
export type LookMode = 'slow' | 'fast';

/**
 * Looks at the running experiment once; records the look (`online_looks`)
 * and, when it is decided, its decision.
 *
 * @returns the new final status, `ripe` when a fast look leaves a decision to the slow loop, or undefined when it keeps running
 */
export async function lookAt(
  study: OnlineStudy,
  experiment: OnlineExperimentRecord,
  at: string,
  mode: LookMode = 'slow',
): Promise<string | undefined> {
  const { db, config } = study;
  const evidence: StoredEvidence = { ...(experiment.evidence as StoredEvidence | null) };
  const settings = await gateSettings(db, config);
  const input = await gateInput(db, config, experiment, evidence, at);
  const decision = decideOnline(input, experiment.kind === 'aa' ? { ...settings, tau: 0 } : settings);
  const next: StoredEvidence = {
    ...evidence,
    looks: input.looks,
    pValues: runningMinimum(evidence.pValues, alwaysValidPValues(decision)),
    decision,
  };
  if (experiment.kind === 'aa')
    return lookAtCalibration(db, experiment, input, decision, next, at, settings.minUnitsPerArm, mode);
  const urgent = decision.outcome === 'refuse' && (decision.reason === 'harm' || decision.reason === 'srm');
  const opensConfirmation =
    decision.outcome === 'continue' && decision.waitingFor === 'confirmation' && experiment.status === 'decision';
  if (mode === 'fast' && !urgent && (decision.outcome !== 'continue' || opensConfirmation)) return 'ripe';
  const look = lookRecord(experiment, input, decision, at);
  if (decision.outcome !== 'continue') {
    const status = decision.outcome === 'accept' ? 'accepted' : decision.reason === 'srm' ? 'invalid' : 'refused';
    next.decisionArms = next.frozenPrimary ?? input.primary.arms;
    next.decisionWindow = decisionWindowSummary(next.decisionArms);
    await db.transaction().execute(async (transaction) => {
      await updateOnlineExperiment(transaction, experiment.id, {
        status,
        decidedAt: at,
        reason: decision.outcome === 'accept' ? 'accepted' : decision.reason,
        evidence: next as Record<string, unknown>,
      });
      await recordOnlineLook(transaction, look);
      if (status === 'accepted')
        await setRegistryVersion(
          transaction,
          experiment.candidateVersionId,
          `online experiment ${experiment.id} accepted`,
          'active',
          study.now,
        );
    });
    return status;
  }
  if (opensConfirmation) {
    next.frozenPrimary = input.primary.arms;
    await db.transaction().execute(async (transaction) => {
      await updateOnlineExperiment(transaction, experiment.id, {
        status: 'confirmation',
        confirmationStartedAt: at,
        evidence: next as Record<string, unknown>,
      });
      await recordOnlineLook(transaction, look);
    });
    return undefined;
  }
  const harmless = decision.checks.every((check) =>
    check.name === 'srm' || check.name === 'harm' ? check.verdict === 'pass' : true,
  );
  const rampDue =
    experiment.status === 'decision' &&
    experiment.rampStep < config.metrics.ramp.length - 1 &&
    Date.parse(at) - Date.parse(experiment.rampChangedAt) >= config.metrics.rampEveryMs;
  await db.transaction().execute(async (transaction) => {
    await updateOnlineExperiment(transaction, experiment.id, {
      evidence: next as Record<string, unknown>,
      ...(rampDue && harmless ? { rampStep: experiment.rampStep + 1, rampChangedAt: at } : {}),
    });
    await recordOnlineLook(transaction, look);
  });
  return undefined;
}

/** The A/A calibration: done once both arms reached the minimum (a slow look); invalid on a sample-ratio mismatch (any look). */
async function lookAtCalibration(
  db: StudyDatabase,
  experiment: OnlineExperimentRecord,
  input: OnlineGateInput,
  decision: OnlineGateDecision,
  next: StoredEvidence,
  at: string,
  minimum: number,
  mode: LookMode,
): Promise<string | undefined> {
  const srm = decision.checks.find((check) => check.name === 'srm');
  const { incumbent, candidate } = input.primary.arms;
  const reached = Math.min(incumbent.units, candidate.units) >= minimum;
  if (srm?.verdict !== 'fail' && reached && mode === 'fast') return 'ripe';
  const [status, outcome] =
    srm?.verdict === 'fail'
      ? (['invalid', 'refuse'] as const)
      : reached
        ? (['calibrated', 'calibrated'] as const)
        : ([undefined, 'continue'] as const);
  if (status === 'calibrated') {
    next.calibration = { primary: input.primary.arms, tau: calibrationTau([input.primary.arms], input.primary.metric) };
    next.decisionArms = input.primary.arms;
  }
  const look = lookRecord(experiment, input, decision, at, outcome);
  await db.transaction().execute(async (transaction) => {
    await updateOnlineExperiment(transaction, experiment.id, {
      evidence: next as Record<string, unknown>,
      ...(status === undefined ? {} : { status, decidedAt: at, reason: status === 'invalid' ? 'srm' : 'calibrated' }),
    });
    await recordOnlineLook(transaction, look);
  });
  return status;
}

function decisionWindowSummary(arms: ArmPair): StoredEvidence['decisionWindow'] {
  const mean = (units: number, sum: number): number => (units === 0 ? 0 : sum / units);
  return {
    incumbentMean: mean(arms.incumbent.units, arms.incumbent.sum),
    candidateMean: mean(arms.candidate.units, arms.candidate.sum),
    units: arms.incumbent.units + arms.candidate.units,
  };
}

/** Asks the proposer for the next variant and starts its experiment, or stops the study. */
async function startNext(
  study: OnlineStudy,
  proposer: OnlineProposer,
  report: SlowLoopReport,
  at: string,
): Promise<void> {
  const { db, config } = study;
  const experiments = (await listOnlineExperiments(db)).filter((experiment) => experiment.kind === 'ab');
  if (experiments.length >= config.stopping.maxExperiments) {
    await stop(
      db,
      'max_experiments',
      `${experiments.length} experiments run (stopping.maxExperiments: ${config.stopping.maxExperiments})`,
      at,
    );
    return;
  }
  const incumbent = (await getRegistryVersion(db))!;
  // The decided experiments as the proposer may read them: variant, verdict and the decision window (never a confirmation window).
  const decided = await Promise.all(
    experiments.map(async (experiment) => {
      const version = await getVersion(db, experiment.candidateVersionId);
      const evidence = experiment.evidence as StoredEvidence | null;
      const interval = evidence?.decision?.checks.find((check) => check.name === 'primary')?.interval;
      return {
        id: experiment.id,
        rationale: experiment.rationale,
        candidateHash: version?.hash ?? '',
        candidateText: version?.text ?? '',
        status: experiment.status,
        reason: experiment.reason,
        decisionWindow: evidence?.decisionWindow ?? null,
        interval:
          interval === undefined
            ? null
            : {
                lower: Number.isFinite(interval.lower) ? interval.lower : null,
                upper: Number.isFinite(interval.upper) ? interval.upper : null,
                level: interval.level,
              },
      };
    }),
  );
  let candidate;
  try {
    candidate = await proposer.propose({
      incumbentText: incumbent.text,
      program: loadProgram(config.program),
      decided,
    });
  } catch (error) {
    if (!BudgetExceededError.isInstance(error)) throw error;
    await stop(db, 'budget', error.message, at);
    return;
  }
  if (candidate === undefined) {
    await stop(db, 'no_new_proposals', `the ${proposer.name} proposer has no untried variant left`, at);
    return;
  }
  const version = await putVersion(db, candidate.text, 'candidate', incumbent.id, null, study.now);
  const started = await startOnlineExperiment(db, {
    kind: 'ab',
    incumbentVersionId: incumbent.id,
    candidateVersionId: version.id,
    rationale: candidate.rationale,
    proposer: proposer.name,
    at,
  });
  report.started.push(started.id);
}
