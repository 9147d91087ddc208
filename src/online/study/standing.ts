/**
 * Where each online experiment stands: arms, units per window, the primary
 * metric's lift on the decision window with its interval, what it waits for
 * and its decision. Read-only; the slow loop and `kloop show` print it.
 */
import type { StudyDatabase } from '../../storage/study-database.ts';
import {
  armStatistics,
  exposureCounts,
  listOnlineExperiments,
  type OnlineExperimentRecord,
} from '../../storage/online-store.ts';
import type { OnlineStudyConfig } from '../config.ts';
import { armDifference } from '../statistics/arm-moments.ts';
import type { ArmPair, OnlineCheck, OnlineGateDecision } from '../types.ts';

/** One experiment's standing. */
export interface ExperimentStanding {
  id: number;
  /** `aa` (A/A calibration) or `ab`. */
  kind: 'aa' | 'ab';
  /** `decision`, `confirmation`, `accepted`, `refused`, `invalid` or `calibrated`. */
  status: string;
  /** The idea or rationale of the variant. */
  rationale: string;
  incumbentVersionId: number;
  candidateVersionId: number;
  startedAt: string;
  decidedAt: string | null;
  /** The decision's reason (`accepted`, a refusal reason, `calibrated`), null while running. */
  reason: string | null;
  /** The candidate's share of new units now (0 once decided). */
  candidateShare: number;
  /** Units assigned per window and arm (closed or not). */
  units: { decision: { incumbent: number; candidate: number }; confirmation: { incumbent: number; candidate: number } };
  /** The primary metric on the decision window's closed units (frozen once the confirmation window opened). */
  /** The interval's ends are null when unbounded (JSON has no Infinity). */
  primary: {
    metric: string;
    incumbentMean: number;
    candidateMean: number;
    delta: number;
    relativeLift: number | null;
    interval: { lower: number | null; upper: number | null; level: number } | null;
    analysedUnits: number;
  };
  /** The check it waits for, while running. */
  waitingFor: string | null;
  /** Looks so far. */
  looks: number;
  /** Every check of its last look, with statistic, threshold and verdict. */
  checks: OnlineCheck[];
}

/** The standing of every online experiment at `at`, oldest first. */
export async function describeStandings(
  db: StudyDatabase,
  config: OnlineStudyConfig,
  at: string,
): Promise<ExperimentStanding[]> {
  const experiments = await listOnlineExperiments(db);
  return Promise.all(experiments.map((experiment) => describeStanding(db, config, experiment, at)));
}

async function describeStanding(
  db: StudyDatabase,
  config: OnlineStudyConfig,
  experiment: OnlineExperimentRecord,
  at: string,
): Promise<ExperimentStanding> {
  const metric = config.metrics.primary;
  const evidence = (experiment.evidence ?? {}) as {
    looks?: number;
    decision?: OnlineGateDecision;
    frozenPrimary?: ArmPair;
    decisionArms?: ArmPair;
  };
  // A decided experiment shows the statistics it was decided on; a running one its closed units now (frozen once confirming).
  const arms =
    evidence.decisionArms ??
    evidence.frozenPrimary ??
    (await armStatistics(db, {
      experimentId: experiment.id,
      metric: metric.name,
      kind: metric.kind,
      window: 'decision',
      closedBy: at,
    }));
  const difference = armDifference(arms, metric.kind, metric.direction);
  const checks = [...(evidence.decision?.checks ?? [])];
  const interval = checks.find((check) => check.name === 'primary')?.interval ?? null;
  const running = experiment.status === 'decision' || experiment.status === 'confirmation';
  const share = !running
    ? 0
    : experiment.status === 'confirmation' || experiment.kind === 'aa'
      ? config.metrics.split
      : config.metrics.ramp[Math.min(experiment.rampStep, config.metrics.ramp.length - 1)]!;
  return {
    id: experiment.id,
    kind: experiment.kind,
    status: experiment.status,
    rationale: experiment.rationale,
    incumbentVersionId: experiment.incumbentVersionId,
    candidateVersionId: experiment.candidateVersionId,
    startedAt: experiment.startedAt,
    decidedAt: experiment.decidedAt,
    reason: experiment.reason,
    candidateShare: share,
    units: await exposureCounts(db, experiment.id),
    primary: {
      metric: metric.name,
      incumbentMean: difference.incumbent.mean,
      candidateMean: difference.candidate.mean,
      delta: difference.delta,
      relativeLift:
        difference.incumbent.mean === 0
          ? null
          : (difference.candidate.mean - difference.incumbent.mean) / difference.incumbent.mean,
      interval: interval === undefined ? null : interval,
      analysedUnits: arms.incumbent.units + arms.candidate.units,
    },
    waitingFor:
      running && evidence.decision?.outcome === 'continue'
        ? evidence.decision.waitingFor
        : running
          ? 'minimum_units'
          : null,
    looks: evidence.looks ?? 0,
    checks,
  };
}
