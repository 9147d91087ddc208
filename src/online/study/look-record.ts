/**
 * The stored form of one look of the online gate (`online_looks`, migration
 * 0010): the primary metric on the decision window's closed units at the
 * look (units and means per arm, Δ), the primary check's anytime-valid
 * interval and p-value when it ran, the outcome and every check's verdict.
 * `kloop view` draws lift and interval over looks from these rows.
 */
import type { ExposureWindow, OnlineExperimentRecord, OnlineLookRecord } from '../../storage/online-store.ts';
import { armDifference } from '../statistics/arm-moments.ts';
import type { OnlineGateDecision, OnlineGateInput } from '../types.ts';

/** What a look did: the gate's outcome, or for the A/A calibration `calibrated` / `continue` / `refuse` (srm). */
export type LookOutcome = 'continue' | 'accept' | 'refuse' | 'calibrated';

/** The record of one look (see the module's description). */
export function lookRecord(
  experiment: OnlineExperimentRecord,
  input: OnlineGateInput,
  decision: OnlineGateDecision,
  at: string,
  outcome: LookOutcome = decision.outcome,
): OnlineLookRecord {
  const { metric, arms } = input.primary;
  const difference = armDifference(arms, metric.kind, metric.direction);
  const primary = decision.checks.find((check) => check.name === 'primary');
  const window: ExposureWindow = experiment.status === 'confirmation' ? 'confirmation' : 'decision';
  const reason =
    outcome === 'refuse' && decision.outcome === 'refuse'
      ? decision.reason
      : outcome === 'continue' && decision.outcome === 'continue'
        ? decision.waitingFor
        : null;
  return {
    experimentId: experiment.id,
    look: input.looks,
    at,
    window,
    units: { incumbent: arms.incumbent.units, candidate: arms.candidate.units },
    incumbentMean: difference.incumbent.mean,
    candidateMean: difference.candidate.mean,
    delta: difference.delta,
    interval:
      primary?.interval === undefined
        ? null
        : { lower: primary.interval.lower, upper: primary.interval.upper, level: primary.interval.level },
    pValue: primary?.pValue ?? null,
    outcome,
    reason,
    checks: decision.checks.map((check) => ({ name: check.name, verdict: check.verdict })),
  };
}
