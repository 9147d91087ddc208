/**
 * What the online gate is given at a look of the slow loop
 * (src/online/study/slow-loop.ts): its settings (the config over the gate's
 * defaults, τ from the A/A calibrations) and its input, read from the notebook.
 */
import type { StudyDatabase } from '../../storage/study-database.ts';
import type { OnlineExperimentRecord } from '../../storage/online-store.ts';
import { armStatistics, assignmentPeriods, listOnlineExperiments } from '../../storage/online-store.ts';
import type { OnlineStudyConfig } from '../config.ts';
import { calibrationTau, DEFAULT_ONLINE_GATE_SETTINGS } from '../gate/online-gate.ts';
import type { ArmPair, OnlineGateDecision, OnlineGateInput, OnlineGateSettings, OnlineMetric } from '../types.ts';

/** Calibrations the rolling maximum of τ looks back over. */
export const ONLINE_CALIBRATION_WINDOW = 5;

/** The evidence an online experiment keeps between looks. */
export interface StoredEvidence {
  looks?: number;
  pValues?: Record<string, number>;
  frozenPrimary?: ArmPair;
  decision?: OnlineGateDecision;
  calibration?: { primary: ArmPair; tau?: number };
  decisionWindow?: { incumbentMean: number; candidateMean: number; units: number };
  /** The decision window's primary statistics when the experiment was decided. */
  decisionArms?: ArmPair;
}

/** The config's metrics in the gate's shapes. */
export function gateMetrics(config: OnlineStudyConfig): {
  primary: OnlineMetric;
  guardrails: { metric: OnlineMetric; margin: number }[];
} {
  return {
    primary: config.metrics.primary,
    guardrails: config.metrics.guardrails.map(({ margin, ...metric }) => ({ metric, margin })),
  };
}

/** The gate's settings for this study: its config over the gate's defaults, and τ from the A/A calibrations. */
export async function gateSettings(db: StudyDatabase, config: OnlineStudyConfig): Promise<OnlineGateSettings> {
  const calibrations = (await listOnlineExperiments(db))
    .filter((experiment) => experiment.kind === 'aa' && experiment.status === 'calibrated')
    .slice(-ONLINE_CALIBRATION_WINDOW)
    .map((experiment) => (experiment.evidence as StoredEvidence).calibration!.primary);
  return {
    ...DEFAULT_ONLINE_GATE_SETTINGS,
    alpha: config.gate.alpha,
    shadowAlpha: config.gate.shadowAlpha,
    srmAlpha: config.gate.srmAlpha,
    tau: calibrationTau(calibrations, config.metrics.primary),
    minUnitsPerArm: config.metrics.windows.minUnitsPerArm,
    confirmationUnits: config.metrics.windows.confirmationUnits,
    maxUnitsPerArm: config.metrics.windows.maxUnitsPerArm ?? Number.POSITIVE_INFINITY,
    split: config.metrics.split,
  };
}

/** The gate's input at this look, from the notebook. */
export async function gateInput(
  db: StudyDatabase,
  config: OnlineStudyConfig,
  experiment: OnlineExperimentRecord,
  evidence: StoredEvidence,
  at: string,
): Promise<OnlineGateInput> {
  const metrics = gateMetrics(config);
  const primaryOf = (window: 'decision' | 'confirmation') =>
    armStatistics(db, {
      experimentId: experiment.id,
      metric: metrics.primary.name,
      kind: metrics.primary.kind,
      window,
      closedBy: at,
    });
  const primary = evidence.frozenPrimary ?? (await primaryOf('decision'));
  const guardrails = await Promise.all(
    metrics.guardrails.map(async (guardrail) => ({
      guardrail,
      arms: await armStatistics(db, {
        experimentId: experiment.id,
        metric: guardrail.metric.name,
        kind: guardrail.metric.kind,
        closedBy: at,
      }),
    })),
  );
  return {
    primary: { metric: metrics.primary, arms: primary },
    guardrails,
    assignments: await assignmentPeriods(db, experiment.id),
    ...(experiment.status === 'confirmation' ? { confirmation: await primaryOf('confirmation') } : {}),
    looks: (evidence.looks ?? 0) + 1,
    ...(evidence.pValues === undefined ? {} : { previousPValues: evidence.pValues }),
  };
}

/** The running minimum of the always-valid p-values, key by key. */
export function runningMinimum(
  previous: Record<string, number> | undefined,
  current: Record<string, number>,
): Record<string, number> {
  const merged = { ...(previous ?? {}) };
  for (const [key, value] of Object.entries(current)) merged[key] = Math.min(merged[key] ?? 1, value);
  return merged;
}
