/**
 * Table shapes of the study database (the lab notebook), for Kysely.
 *
 * JSON columns hold text; timestamps are ISO 8601 UTC strings.
 */
import type { Generated } from 'kysely';

export interface ArtifactVersionTable {
  id: Generated<number>;
  hash: string;
  text: string;
  parent_id: number | null;
  /** 'seed' | 'accepted' | 'approved' | 'imported' */
  source: string;
  experiment_id: number | null;
  created_at: string;
}

/** The prompt registry: named pointers to artifact versions ('active'). */
export interface RegistryTable {
  name: string;
  version_id: number;
  updated_at: string;
}

/** Append-only history of registry moves. */
export interface RegistryEventTable {
  id: Generated<number>;
  name: string;
  version_id: number;
  reason: string;
  created_at: string;
}

/** One experiment = one candidate, with its decision and evidence. Append-only. */
export interface ExperimentTable {
  id: Generated<number>;
  run_id: number;
  round: number;
  proposer: string;
  base_version_id: number;
  candidate_hash: string;
  delta: string;
  rationale: string;
  /** 'accepted' | 'refused' | 'skipped' */
  decision: string;
  /** refusal reason code, or 'accepted' */
  reason: string;
  /** JSON: the gate's evidence */
  evidence: string;
  accepted_version_id: number | null;
  fingerprint: string;
  seed: number;
  created_at: string;
}

/** One evaluation of one artifact on one partition (membership hash) for one repeat. */
export interface EvaluationTable {
  id: Generated<number>;
  fingerprint: string;
  artifact_hash: string;
  partition: string;
  partition_hash: string;
  repeat: number;
  composite: number | null;
  components: string;
  metrics: string;
  invalid: number;
  total: number;
  usage: string;
  latency_ms: number;
  created_at: string;
}

export interface EvaluationExampleTable {
  evaluation_id: number;
  example_id: string;
  valid: number;
  composite: number | null;
  /** JSON of the full ExampleScore */
  score: string;
}

export interface CalibrationTable {
  id: Generated<number>;
  fingerprint: string;
  model: string;
  artifact_hash: string;
  noise_repeats: number;
  signal_repeats: number;
  noise_sd: number;
  /** JSON: example id → SD across noise repeats */
  example_sds: string;
  /** JSON: partition → run-level noise SD */
  partition_sds: string;
  cohens_d: number | null;
  threshold: number;
  valid: number;
  message: string;
  created_at: string;
}

export interface RunTable {
  id: Generated<number>;
  started_at: string;
  ended_at: string | null;
  stop_reason: string | null;
  /** JSON of the final report */
  report: string | null;
}

export interface StudyStateTable {
  key: string;
  value: string;
}

/** LLM response cache: key covers model, base URL, parameters, messages and repeat index. */
export interface ResponseCacheTable {
  key: string;
  model: string;
  response: string;
  created_at: string;
}

export interface KloopDatabase {
  artifact_versions: ArtifactVersionTable;
  registry: RegistryTable;
  registry_events: RegistryEventTable;
  experiments: ExperimentTable;
  evaluations: EvaluationTable;
  evaluation_examples: EvaluationExampleTable;
  calibrations: CalibrationTable;
  runs: RunTable;
  study_state: StudyStateTable;
  response_cache: ResponseCacheTable;
}
