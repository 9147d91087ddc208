/**
 * Reading a stored decision's evidence (`experiments.evidence`, JSON)
 * defensively: the gate's evidence grows over time (more checks, more `data`
 * fields), so every field is optional here and an unreadable record is an
 * empty one, never an exception.
 *
 * Shape read: `{ checks: [{ name, passed, statistic, threshold, detail, data }], shadowConsulted }`.
 */

/** One check as the viewer and the reports show it. */
export interface EvidenceCheck {
  name: string;
  passed: boolean;
  /** The check's statistic (Δ, p-value, worst drop, ...); null when absent or not a finite number. */
  statistic: number | null;
  /** What the statistic was compared with; null when absent. */
  threshold: number | null;
  detail: string;
  /** The check's extra evidence as stored (test results, example ids, counts). */
  data: Record<string, unknown>;
}

/** A decision's evidence. */
export interface Evidence {
  checks: EvidenceCheck[];
  shadowConsulted: boolean;
  /** False when the stored JSON could not be read. */
  readable: boolean;
}

/** A finite number, or null. */
export function finiteOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Parses `experiments.evidence`. Never throws. */
export function parseEvidence(text: string): Evidence {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { checks: [], shadowConsulted: false, readable: false };
  }
  const root = record(parsed);
  const checks = Array.isArray(root['checks']) ? root['checks'] : [];
  return {
    checks: checks.map((raw) => {
      const check = record(raw);
      return {
        name: typeof check['name'] === 'string' ? check['name'] : 'unnamed',
        passed: check['passed'] === true,
        statistic: finiteOrNull(check['statistic']),
        threshold: finiteOrNull(check['threshold']),
        detail: typeof check['detail'] === 'string' ? check['detail'] : '',
        data: record(check['data']),
      };
    }),
    shadowConsulted: root['shadowConsulted'] === true,
    readable: true,
  };
}

/** The check of that name, if recorded. */
export function findCheck(evidence: Evidence, name: string): EvidenceCheck | undefined {
  return evidence.checks.find((check) => check.name === name);
}

/** Δoptimization as the gate measured it (paired, over examples valid for both): the margin check's statistic. */
export function gateDelta(evidence: Evidence): number | null {
  return findCheck(evidence, 'margin')?.statistic ?? null;
}

/**
 * The paired test's p-value of the significance check, at full precision:
 * `data.pValue`, else `data.paired.pValue`, else the check's statistic (the
 * p-value, rounded); null when the check did not run.
 */
export function gatePValue(evidence: Evidence): number | null {
  const check = findCheck(evidence, 'significance');
  if (check === undefined) return null;
  return finiteOrNull(check.data['pValue']) ?? finiteOrNull(record(check.data['paired'])['pValue']) ?? check.statistic;
}

/** Welch's p-value when the significance check recorded one (`data.welch.pValue`). */
export function gateWelchPValue(evidence: Evidence): number | null {
  const check = findCheck(evidence, 'significance');
  return check === undefined ? null : finiteOrNull(record(check.data['welch'])['pValue']);
}

/** Repeats the gate compared (`margin.data.repeats`), if recorded. */
export function gateRepeats(evidence: Evidence): number | null {
  const repeats = finiteOrNull(findCheck(evidence, 'margin')?.data['repeats']);
  return repeats !== null && Number.isInteger(repeats) && repeats >= 1 ? repeats : null;
}
