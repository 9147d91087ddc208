/**
 * Table shapes of the study database (the lab notebook), for Kysely.
 *
 * JSON columns hold text; timestamps are ISO 8601 UTC strings.
 */
import type { Generated } from 'kysely';
import type {
  ExposureTable,
  OnlineExperimentTable,
  OnlineLookTable,
  OutcomeRefusalTable,
  OutcomeTable,
} from './online-schema.ts';

export type { ExposureTable, OnlineExperimentTable, OutcomeRefusalTable, OutcomeTable };

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
  /** Who moved the pointer by hand (`kloop activate --by`); null for the loop's own moves. Added by migration 0007. */
  actor: string | null;
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
  /** The lines the candidate adds (`+ `) and removes (`- `) against its base; null in rows older than migration 0006. */
  change: string | null;
  /**
   * The identity of the proposed candidate this experiment decided:
   * `r<round>.c<position>.<content hash, 16 hex>` (src/loop/candidate-id.ts);
   * null in rows older than migration 0008.
   */
  candidate_id: string | null;
}

/**
 * One example's result for one artifact and repeat (migration 0006): what a
 * partition's evaluation is read from. Transient failures are never stored.
 */
export interface ExampleResultTable {
  fingerprint: string;
  artifact_hash: string;
  example_id: string;
  repeat: number;
  /** 0 | 1 */
  valid: number;
  composite: number | null;
  /** JSON of the full ExampleScoreRecord */
  score: string;
  /** JSON: { inputTokens, outputTokens, costUsd } of this execution */
  usage: string;
  latency_ms: number;
  created_at: string;
}

/** One proposer call: its outcome, failures (reasons and capped raw answers) and tokens. Append-only. */
export interface ProposalTable {
  id: Generated<number>;
  run_id: number;
  round: number;
  /** 0-based attempt within the round: part of the proposer's nonce, so a retried round samples afresh. */
  attempt: number;
  proposer: string;
  /** 'candidates' (at least one usable candidate) | 'failed' (an unusable answer) | 'idle' (nothing new) */
  outcome: string;
  /** Usable candidates returned. */
  candidates: number;
  /** JSON: Array<{ code, scope, reason, raw? }> */
  failures: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  created_at: string;
  /** JSON array of the identities of the call's fresh candidates, in the proposer's order (migration 0008; null in older rows and for a failed or idle call). */
  candidate_ids: string | null;
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

/**
 * The review queue: a change or finding awaiting a human decision
 * (Loop A candidates, Loop C/D findings). Decisions update the row once.
 */
export interface ReviewItemTable {
  id: Generated<number>;
  /** 'artifact' | 'pattern' | 'example' */
  kind: string;
  /** 'loop-a' | 'loop-c' | 'loop-d' */
  source: string;
  title: string;
  /** JSON: what approval applies (artifact text, pattern YAML, example record) */
  payload: string;
  /** JSON: why it was proposed (scores, counts, clusters) */
  evidence: string;
  /** content hash of kind + payload, for dedupe */
  content_hash: string;
  /** 'pending' | 'approved' | 'rejected' */
  status: string;
  run_id: number | null;
  created_at: string;
  decided_at: string | null;
  decided_by: string | null;
  note: string | null;
  /** JSON: what approval did (version id, file written) */
  outcome: string | null;
}

/** One production signal: a runtime call, an ingested record or an endpoint post. */
export interface SignalTable {
  /** uuid */
  id: string;
  /** ISO 8601 time of the call */
  time: string;
  /** 'direct' | 'decomposed' | 'partial' */
  assembly_method: string;
  /** in [0, 1] */
  confidence: number;
  /** the intent's appType */
  app_class: string;
  /** 0 | 1: any entity with role commitment */
  has_commitments: number;
  entity_count: number;
  /** content hash of the artifact version that ran */
  artifact_version: string;
  goal: string | null;
  /** JSON: { uncoveredEntities, uncoveredBehaviors, patterns, timingMs } */
  detail: string;
  /** 'runtime' | 'ingest' | 'endpoint' */
  source: string;
  received_at: string;
}

/** The run lease of a study: one writer at a time (src/storage/lease.ts). */
export interface LeaseTable {
  /** the study the lease covers (its absolute folder) */
  study_key: string;
  /** hostname:pid:random, unique per holder */
  owner_id: string;
  hostname: string;
  pid: number;
  /** ISO 8601 UTC */
  acquired_at: string;
  /** ISO 8601 UTC; a lease whose heartbeat is older than the stale timeout may be taken over */
  heartbeat_at: string;
  /** The fencing token (migration 0008): 1 for a lease taken free, the previous holder's + 1 for a take-over. */
  generation: Generated<number>;
}

/**
 * One example of the study's corpus and where it stands in the lifecycle
 * (DESIGN §4). Rows are updated in place; `corpus_events` keeps the history.
 */
export interface CorpusMemberTable {
  example_id: string;
  /** 'file' (a corpus file listed in kloop.yaml) | 'admitted' (`kloop corpus add`) */
  origin: string;
  /** The file it was read or admitted from, relative to the study folder when inside it. */
  source: string;
  /** JSON of the example (public format) for admitted examples; null for file examples (the file holds them). */
  example: string | null;
  /** 'optimization' | 'anchor' | 'shadow' | 'removed' */
  partition: string;
  /** Gate decisions that evaluated the shadow partition while this example was in it. */
  shadow_exposures: number;
  /** When it last entered the shadow partition (ISO 8601); null if never. */
  shadow_since: string | null;
  /** When it joined the study's corpus (ISO 8601). */
  admitted_at: string;
  updated_at: string;
}

/** One move of the corpus lifecycle. Append-only. */
export interface CorpusEventTable {
  id: Generated<number>;
  /** Null for a refused record whose id could not be read. */
  example_id: string | null;
  /** 'initial' | 'anchored' | 'admitted' | 'refused' | 'shadow' | 'graduated' | 'rotated_out' | 'removed' */
  kind: string;
  from_partition: string | null;
  to_partition: string | null;
  reason: string;
  /** The last experiment decided when the move happened (null: none yet); decision E saw every move with experiment_id < E. */
  experiment_id: number | null;
  /** JSON: exposures, refusal reasons, source file, ... */
  details: string;
  created_at: string;
}

/** One `kloop run --loop A` invocation. */
export interface LoopARunTable {
  id: Generated<number>;
  started_at: string;
  ended_at: string | null;
  /** Registry version the candidates were derived from. */
  incumbent_version_id: number;
  /** 'running' | 'done' | 'failed' */
  status: string;
  /** JSON of the run's report */
  report: string | null;
}

/** One Loop A candidate and its decision. Append-only. */
export interface LoopADecisionTable {
  id: Generated<number>;
  run_id: number;
  /** 'artifact' | 'pattern' */
  kind: string;
  candidate_hash: string;
  delta: string;
  rationale: string;
  /** 'queued' (sent to review) | 'refused' | 'skipped' */
  decision: string;
  /** 'queued', or the refusal reason code */
  reason: string;
  /** JSON: Loop A and Loop B evidence */
  evidence: string;
  review_item_id: number | null;
  created_at: string;
}

/** One scheduled run of a loop (`kloop schedule`), with its outcome. */
export interface ScheduleRunTable {
  id: Generated<number>;
  /** 'A' | 'B' | 'C' | 'D' */
  loop: string;
  /** ISO time the cadence fired (or the manual trigger) */
  scheduled_at: string;
  started_at: string;
  ended_at: string | null;
  /** 'running' | 'ok' | 'failed' | 'skipped' | 'interrupted' | 'overlap' */
  outcome: string;
  /** JSON: what the run did or why it failed */
  detail: string;
}

export interface KloopDatabase {
  artifact_versions: ArtifactVersionTable;
  registry: RegistryTable;
  registry_events: RegistryEventTable;
  experiments: ExperimentTable;
  evaluations: EvaluationTable;
  evaluation_examples: EvaluationExampleTable;
  example_results: ExampleResultTable;
  proposals: ProposalTable;
  calibrations: CalibrationTable;
  runs: RunTable;
  study_state: StudyStateTable;
  response_cache: ResponseCacheTable;
  corpus_members: CorpusMemberTable;
  corpus_events: CorpusEventTable;
  leases: LeaseTable;
  review_items: ReviewItemTable;
  signals: SignalTable;
  schedule_runs: ScheduleRunTable;
  loop_a_runs: LoopARunTable;
  loop_a_decisions: LoopADecisionTable;
  online_experiments: OnlineExperimentTable;
  exposures: ExposureTable;
  outcomes: OutcomeTable;
  outcome_refusals: OutcomeRefusalTable;
  online_looks: OnlineLookTable;
}
