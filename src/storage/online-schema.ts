/**
 * The tables of online studies (migration 0008_online_studies; src/online/).
 */
import type { Generated } from 'kysely';

/** One online experiment (src/online/, migration 0008). */
export interface OnlineExperimentTable {
  id: Generated<number>;
  /** 'aa' (the A/A calibration: the incumbent against itself) | 'ab' */
  kind: string;
  incumbent_version_id: number;
  candidate_version_id: number;
  /** 'decision' | 'confirmation' | 'accepted' | 'refused' | 'invalid' */
  status: string;
  /** index into the configured ramp */
  ramp_step: number;
  ramp_changed_at: string;
  rationale: string;
  proposer: string;
  started_at: string;
  confirmation_started_at: string | null;
  decided_at: string | null;
  /** the gate's reason once decided */
  reason: string | null;
  /** JSON: the gate's evidence, every check */
  evidence: string | null;
}

/** The first (sticky) assignment of a unit in an experiment. */
export interface ExposureTable {
  id: Generated<number>;
  experiment_id: number;
  unit: string;
  /** 'incumbent' | 'candidate' */
  arm: string;
  version_id: number;
  /** 'decision' | 'confirmation' */
  window: string;
  /** the candidate's share of traffic when the unit was assigned, in (0, 1) */
  share: number;
  exposed_at: string;
  /** exposed_at + the attribution window: outcomes up to this time count; the unit is analysed after it */
  attribution_ends_at: string;
}

/** One outcome of a unit; unique (unit, metric, at), so re-sent outcomes are one row. */
export interface OutcomeTable {
  id: Generated<number>;
  unit: string;
  metric: string;
  value: number;
  /** ISO time the outcome happened */
  at: string;
  /** 'library' | 'http' | 'scraper' */
  source: string;
  received_at: string;
}

/** An outcome line refused (malformed, unknown unit or metric), by its line number. */
export interface OutcomeRefusalTable {
  id: Generated<number>;
  source: string;
  /** 1-based line of the batch */
  line: number;
  reason: string;
  /** the line, capped */
  text: string;
  received_at: string;
}

/** One look of the online gate at an experiment (migration 0010): the series `kloop view` draws. */
export interface OnlineLookTable {
  id: Generated<number>;
  experiment_id: number;
  /** 1-based look number of the experiment */
  look: number;
  /** ISO time of the look (the study's clock) */
  at: string;
  /** 'decision' | 'confirmation': the experiment's window at the look */
  window: string;
  /** primary metric, decision window, closed units at the look (frozen once confirming) */
  incumbent_units: number;
  candidate_units: number;
  incumbent_mean: number;
  candidate_mean: number;
  /** Δ oriented so positive is better for the candidate */
  delta: number;
  /** the primary check's anytime-valid interval for Δ; null when the check did not run or an end is unbounded */
  lower: number | null;
  upper: number | null;
  level: number | null;
  /** the primary check's always-valid p-value (running minimum), null when it did not run */
  p_value: number | null;
  /** 'continue' | 'accept' | 'refuse' */
  outcome: string;
  /** the refusal reason or the check waited for */
  reason: string | null;
  /** JSON: [{ name, verdict }] of every check run at the look */
  checks: string;
}
