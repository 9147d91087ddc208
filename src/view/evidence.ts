/**
 * Reading a stored decision's evidence (`experiments.evidence`, JSON)
 * defensively: the gate's evidence grows over time (more checks, more `data`
 * fields), so every field is optional here and an unreadable record is an
 * empty one, never an exception.
 *
 * Shape read: `{ checks: [{ name, passed, statistic, threshold, detail, data }],
 * shadowConsulted, scores?, rebased? }`. `scores` (src/loop/integrate.ts,
 * `DecisionScores`) is what the gate compared, recorded since results are
 * stored per example and repeat: per partition compared (`optimization`,
 * `anchor`, and `shadow` when the gate consulted it) the incumbent's and the
 * candidate's composites, the example-repeats evaluated for the candidate and
 * the per-example mean composites of the examples valid for both; the
 * candidate's tokens and cost; and the repeats of each side. Experiments
 * recorded before, and those refused before the gate (`evaluation_failed`,
 * `duplicate`), have none.
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

/** One partition as the gate compared it (`scores.<partition>` of the evidence). */
export interface EvidencePartitionScores {
  /** The incumbent's composite (mean over valid example-repeats); null when nothing was valid. */
  incumbent: number | null;
  /** The candidate's. */
  candidate: number | null;
  /** Example-repeats evaluated for the candidate (valid or not). */
  evaluated: number;
  /**
   * The examples valid for both sides, by id, with their per-example mean
   * composites (rounded to 6 decimals, in the order of `ids`), and the ids
   * left out (invalid in every repeat on a side).
   */
  examples: { ids: string[]; incumbent: number[]; candidate: number[]; leftOut: string[] };
}

/** What the gate compared (`scores` of the evidence). */
export interface EvidenceScores {
  optimization: EvidencePartitionScores | null;
  anchor: EvidencePartitionScores | null;
  /** Present when the gate consulted the shadow. */
  shadow: EvidencePartitionScores | null;
  /** Tokens and cost of the candidate's evaluations, as first computed (0 when every result was stored already). */
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  /** Repeats of each side (the incumbent of a stochastic executor is topped up each round: more than the candidate). */
  repeats: { candidate: number | null; incumbent: number | null };
}

/** How a candidate proposed against an older incumbent was re-applied to the current one. */
export interface EvidenceRebase {
  /** 'proposer' | 'three-way-merge' */
  method: string;
  conflicts: number;
  /** Content hash of the candidate as proposed, before the rebase. */
  proposedHash: string | null;
}

/** A decision's evidence. */
export interface Evidence {
  checks: EvidenceCheck[];
  shadowConsulted: boolean;
  /** False when the stored JSON could not be read. */
  readable: boolean;
  /** What the gate compared; null when not recorded (an experiment recorded before it was, or refused before the gate). */
  scores: EvidenceScores | null;
  /** Set when the candidate was rebased onto a newer incumbent before it was judged. */
  rebased: EvidenceRebase | null;
}

/** A finite number, or null. */
export function finiteOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function numbers(value: unknown): number[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === 'number' && Number.isFinite(item))
    ? (value as number[])
    : null;
}

function strings(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : null;
}

function countOrNull(value: unknown): number | null {
  const number = finiteOrNull(value);
  return number !== null && Number.isInteger(number) && number >= 0 ? number : null;
}

/** One partition of `scores`; null when absent or not of the recorded shape. */
function parsePartitionScores(value: unknown): EvidencePartitionScores | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const raw = value as Record<string, unknown>;
  const examples = record(raw.examples);
  const ids = strings(examples.ids) ?? [];
  const incumbent = numbers(examples.incumbent) ?? [];
  const candidate = numbers(examples.candidate) ?? [];
  const consistent = incumbent.length === ids.length && candidate.length === ids.length;
  return {
    incumbent: finiteOrNull(raw.incumbent),
    candidate: finiteOrNull(raw.candidate),
    evaluated: countOrNull(raw.evaluated) ?? 0,
    examples: consistent
      ? { ids, incumbent, candidate, leftOut: strings(examples.leftOut) ?? [] }
      : { ids: [], incumbent: [], candidate: [], leftOut: [] },
  };
}

function parseScores(value: unknown): EvidenceScores | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const raw = value as Record<string, unknown>;
  const usage = record(raw.usage);
  const repeats = record(raw.repeats);
  const positive = (item: unknown): number | null => {
    const number = countOrNull(item);
    return number !== null && number >= 1 ? number : null;
  };
  return {
    optimization: parsePartitionScores(raw.optimization),
    anchor: parsePartitionScores(raw.anchor),
    shadow: parsePartitionScores(raw.shadow),
    usage: {
      inputTokens: finiteOrNull(usage.inputTokens) ?? 0,
      outputTokens: finiteOrNull(usage.outputTokens) ?? 0,
      costUsd: finiteOrNull(usage.costUsd) ?? 0,
    },
    repeats: { candidate: positive(repeats.candidate), incumbent: positive(repeats.incumbent) },
  };
}

function parseRebase(value: unknown): EvidenceRebase | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const raw = value as Record<string, unknown>;
  return {
    method: typeof raw.method === 'string' ? raw.method : 'unknown',
    conflicts: countOrNull(raw.conflicts) ?? 0,
    proposedHash: typeof raw.proposedHash === 'string' ? raw.proposedHash : null,
  };
}

/** Parses `experiments.evidence`. Never throws. */
export function parseEvidence(text: string): Evidence {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { checks: [], shadowConsulted: false, readable: false, scores: null, rebased: null };
  }
  const root = record(parsed);
  const checks = Array.isArray(root.checks) ? root.checks : [];
  return {
    checks: checks.map((raw) => {
      const check = record(raw);
      return {
        name: typeof check.name === 'string' ? check.name : 'unnamed',
        passed: check.passed === true,
        statistic: finiteOrNull(check.statistic),
        threshold: finiteOrNull(check.threshold),
        detail: typeof check.detail === 'string' ? check.detail : '',
        data: record(check.data),
      };
    }),
    shadowConsulted: root.shadowConsulted === true,
    readable: true,
    scores: parseScores(root.scores),
    rebased: parseRebase(root.rebased),
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
 * p-value, rounded: in evidence recorded with both tests the statistic is the
 * deciding p, the larger of the two, which `data.pValue` always accompanies);
 * null when the check did not run.
 */
export function gatePValue(evidence: Evidence): number | null {
  const check = findCheck(evidence, 'significance');
  if (check === undefined) return null;
  return finiteOrNull(check.data.pValue) ?? finiteOrNull(record(check.data.paired).pValue) ?? check.statistic;
}

/** Welch's p-value when the significance check recorded one (`data.welch.pValue`). */
export function gateWelchPValue(evidence: Evidence): number | null {
  const check = findCheck(evidence, 'significance');
  return check === undefined ? null : finiteOrNull(record(check.data.welch).pValue);
}

/**
 * Repeats the gate compared per side: `scores.repeats`, else the margin
 * check's `data.repeats` (a number when both sides had as many, else
 * "candidate+incumbent", e.g. "5+20"); nulls when not recorded.
 */
export function gateRepeatsOfSides(evidence: Evidence): { candidate: number | null; incumbent: number | null } {
  if (evidence.scores !== null && evidence.scores.repeats.candidate !== null) return evidence.scores.repeats;
  const raw = findCheck(evidence, 'margin')?.data.repeats;
  const whole = (value: number | null): number | null =>
    value !== null && Number.isInteger(value) && value >= 1 ? value : null;
  if (typeof raw === 'number') {
    const repeats = whole(finiteOrNull(raw));
    return { candidate: repeats, incumbent: repeats };
  }
  const split = typeof raw === 'string' ? /^\s*(\d+)\s*\+\s*(\d+)\s*$/.exec(raw) : null;
  return split === null
    ? { candidate: null, incumbent: null }
    : { candidate: whole(Number(split[1])), incumbent: whole(Number(split[2])) };
}

/** Repeats of the candidate the gate compared (see {@link gateRepeatsOfSides}), if recorded. */
export function gateRepeats(evidence: Evidence): number | null {
  return gateRepeatsOfSides(evidence).candidate;
}
