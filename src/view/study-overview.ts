/**
 * The overview of a study, read from its notebook: every experiment with its
 * scores, the incumbent's composite per partition over experiments, the
 * runs and why they stopped, the budget spent, the calibration history and
 * the moves of the active version. Read-only; what `kloop view`, `kloop
 * report` and `kloop history` show.
 */
import { hostname as osHostname } from 'node:os';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { RegistryEvent } from '../storage/activation.ts';
import { listRegistryEvents } from '../storage/activation.ts';
import { LEASE_STALE_AFTER_MS, isProcessAlive, readLease, staleReason } from '../storage/lease.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import type { MembershipMoveRow } from '../storage/notebook/view-queries.ts';
import type { RunRow } from '../storage/notebook/view-queries.ts';
import { readMembershipMoves, readOpenRunId, readRuns, readVersionHashes } from '../storage/notebook/view-queries.ts';
import { listCalibrations } from '../calibration/calibration.ts';
import type { EvaluationIndex, EvaluationUsage, ExperimentScore, PartitionComposites } from './experiment-scores.ts';
import { createVersionScorer, loadEvaluationIndex, loadExperimentScores } from './experiment-scores.ts';

/** An experiment as the overview lists it (its evidence stays on the experiment page). */
export type ExperimentSummary = Omit<ExperimentScore, 'evidence' | 'partitionHashes'> & {
  /** The check that refused it (the first failing one), null when accepted. */
  failedCheck: string | null;
  shadowConsulted: boolean;
};

/** One point of the incumbent's trail: its composites after an experiment. */
export interface TrailPoint {
  /** baseline: the seed before any experiment; experiment: after that experiment; active: the version activated by hand since the last experiment. */
  kind: 'baseline' | 'experiment' | 'active';
  /** 0 for the baseline (the seed, before any experiment); last experiment + 0.5 for `active`. */
  experimentId: number;
  versionId: number;
  composites: PartitionComposites;
}

/** One `kloop run`. */
export interface RunSummary {
  id: number;
  startedAt: string;
  endedAt: string | null;
  stopReason: string | null;
  stopDetail: string | null;
  /** The run's usage meter (executor and proposer), when the run recorded it. */
  usage: { calls: number; cachedCalls: number; inputTokens: number; outputTokens: number; costUsd: number } | null;
}

/** A calibration as the history shows it. */
export interface CalibrationPoint {
  id: number;
  createdAt: string;
  fingerprint: string;
  model: string;
  noiseSd: number;
  cohensD: number | null;
  /** τ */
  threshold: number;
  valid: boolean;
  message: string;
}

/** The study's overview. */
export interface StudyOverview {
  study: string;
  generatedAt: string;
  /**
   * The figure the pages show the composites in: `composite`, or e.g.
   * `misroute rate` with `complement` true (shown as 1 − composite, lower is
   * better), from kloop.yaml `task.reportAs` as the CLI's reports do. The
   * stored figures stay composites.
   */
  headline: { name: string; complement: boolean };
  activeVersion: number | null;
  seedVersion: number | null;
  experiments: ExperimentSummary[];
  counts: {
    experiments: number;
    evaluated: number;
    accepted: number;
    refused: number;
    skipped: number;
    byReason: Record<string, number>;
  };
  /** The incumbent after each experiment, the baseline first. */
  trail: TrailPoint[];
  runs: RunSummary[];
  /** Why the last finished run stopped; null when none finished. */
  stop: { run: number; reason: string; detail: string | null } | null;
  /** The run holding the study now, if any. */
  runInProgress: { pid: number; hostname: string; since: string; heartbeatAt: string; run: number | null } | null;
  budget: {
    /**
     * Stored results (`example_results`): executor calls = example-repeats
     * stored (each executed once; transient failures are not stored), tokens
     * and cost of the executor summed over them, plus those of the
     * per-partition store of notebooks written before it.
     */
    evaluations: EvaluationUsage;
    /** Sum of the runs' usage meters (executor and proposer, cache hits apart), over the runs that recorded one. */
    metered: {
      runs: number;
      calls: number;
      cachedCalls: number;
      inputTokens: number;
      outputTokens: number;
      costUsd: number;
    } | null;
  };
  /** Oldest first. */
  calibrations: CalibrationPoint[];
  /** Moves of the active version, oldest first. */
  registryEvents: RegistryEvent[];
  /** Corpus moves that changed the partitions (graduations, rotations, admissions), by the experiment after which they happened: the incumbent's composites step there without a decision. */
  corpusMoves: Array<{ afterExperiment: number; at: string; kinds: Record<string, number> }>;
}

function parseRunReport(text: string | null): { stopDetail: string | null; usage: RunSummary['usage'] } {
  if (text === null) return { stopDetail: null, usage: null };
  try {
    const report = JSON.parse(text) as { stopDetail?: unknown; usage?: Record<string, unknown> };
    const usage = report.usage;
    const number = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
    return {
      stopDetail: typeof report.stopDetail === 'string' ? report.stopDetail : null,
      usage:
        usage !== undefined && usage !== null && typeof usage === 'object'
          ? {
              calls: number(usage.calls),
              cachedCalls: number(usage.cachedCalls),
              inputTokens: number(usage.inputTokens),
              outputTokens: number(usage.outputTokens),
              costUsd: number(usage.costUsd),
            }
          : null,
    };
  } catch {
    return { stopDetail: null, usage: null };
  }
}

/**
 * The run holding the study's lease now, if its owner looks alive (fresh
 * heartbeat, and on this host a live process); with the id of the open run.
 */
export async function loadRunInProgress(
  db: StudyDatabase,
  studyDir: string,
  now: () => Date = () => new Date(),
): Promise<StudyOverview['runInProgress']> {
  const lease = await readLease(db, studyDir);
  if (
    lease === undefined ||
    staleReason(lease, { now: now(), staleAfterMs: LEASE_STALE_AFTER_MS, hostname: osHostname(), isProcessAlive }) !==
      null
  )
    return null;
  const open = await readOpenRunId(db);
  return {
    pid: lease.pid,
    hostname: lease.hostname,
    since: lease.acquiredAt,
    heartbeatAt: lease.heartbeatAt,
    run: open,
  };
}

/** Options of {@link loadStudyOverview}. */
export interface OverviewOptions {
  /** The study folder (absolute): the key of its run lease. */
  studyDir: string;
  now?: () => Date;
  /** Scores already loaded (the report reuses them). */
  scores?: ExperimentScore[];
  index?: EvaluationIndex;
  /** The study's headline figure (kloop.yaml `task.reportAs`, src/study/compose.ts); default the composite. */
  headline?: { name: string; complement: boolean };
}

/** The incumbent's trail: the seed before any experiment, its composites after each, and a version activated by hand since. */
async function loadTrail(
  db: StudyDatabase,
  index: EvaluationIndex,
  scores: readonly ExperimentScore[],
  active: { id: number; hash: string } | undefined,
): Promise<TrailPoint[]> {
  const trail: TrailPoint[] = [];
  const first = scores[0];
  if (first !== undefined) {
    // The seed before any experiment: the first decision's incumbent, as it measured it (or as resolved for a partition it did not compare).
    trail.push({ kind: 'baseline', experimentId: 0, versionId: first.baseVersion, composites: first.incumbentBefore });
  }
  for (const score of scores)
    trail.push({
      kind: 'experiment',
      experimentId: score.id,
      versionId:
        score.decision === 'accepted' && score.acceptedVersion !== null ? score.acceptedVersion : score.baseVersion,
      composites: score.incumbentAfter,
    });
  const lastScored = scores.filter((score) => score.decision !== 'skipped').at(-1);
  if (active !== undefined && lastScored !== undefined && trail.at(-1)?.versionId !== active.id) {
    // Activated by hand (a rollback) since the last experiment: where the incumbent stands now, on the partitions of the last decision.
    const scorer = createVersionScorer(index, scores, await readVersionHashes(db));
    trail.push({
      kind: 'active',
      experimentId: scores.at(-1)!.id + 0.5,
      versionId: active.id,
      composites: await scorer.composites(active.hash, lastScored),
    });
  }
  return trail;
}

/** The runs, the last one that recorded a stop, and the executor usage summed over the runs that metered it (null: none did). */
function summariseRuns(runRows: readonly RunRow[]): {
  runs: RunSummary[];
  finished: RunSummary | undefined;
  metered: StudyOverview['budget']['metered'];
} {
  const runs: RunSummary[] = runRows.map((row) => ({
    id: row.id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    stopReason: row.stop_reason,
    ...parseRunReport(row.report),
  }));
  const finished = [...runs].reverse().find((run) => run.stopReason !== null);
  const meteredRuns = runs.filter((run) => run.usage !== null);
  const metered =
    meteredRuns.length === 0
      ? null
      : meteredRuns.reduce(
          (sum, run) => ({
            runs: sum.runs + 1,
            calls: sum.calls + run.usage!.calls,
            cachedCalls: sum.cachedCalls + run.usage!.cachedCalls,
            inputTokens: sum.inputTokens + run.usage!.inputTokens,
            outputTokens: sum.outputTokens + run.usage!.outputTokens,
            costUsd: sum.costUsd + run.usage!.costUsd,
          }),
          { runs: 0, calls: 0, cachedCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 },
        );
  return { runs, finished, metered };
}

/** The calibration history, newest first. */
async function loadCalibrationHistory(db: StudyDatabase): Promise<StudyOverview['calibrations']> {
  return (await listCalibrations(db)).reverse().map((record) => ({
    id: record.id,
    createdAt: record.createdAt,
    fingerprint: record.fingerprint,
    model: record.model,
    noiseSd: record.noiseSd,
    cohensD: record.cohensD,
    threshold: record.threshold,
    valid: record.valid,
    message: record.message,
  }));
}

/** Reads the overview of a study's notebook. */
export async function loadStudyOverview(db: StudyDatabase, options: OverviewOptions): Promise<StudyOverview> {
  const now = options.now ?? (() => new Date());
  const index = options.index ?? (await loadEvaluationIndex(db));
  const scores = options.scores ?? (await loadExperimentScores(db, index));
  const active = await getRegistryVersion(db, 'active');
  const seed = await getRegistryVersion(db, 'seed');
  const byReason: Record<string, number> = {};
  for (const score of scores) byReason[score.reason] = (byReason[score.reason] ?? 0) + 1;
  const experiments: ExperimentSummary[] = scores.map(({ evidence, partitionHashes: _hashes, ...rest }) => ({
    ...rest,
    failedCheck: rest.decision === 'accepted' ? null : (evidence.checks.find((check) => !check.passed)?.name ?? null),
    shadowConsulted: evidence.shadowConsulted,
  }));

  const trail = await loadTrail(db, index, scores, active);

  const { runs, finished, metered } = summariseRuns(await readRuns(db));

  return {
    study: options.studyDir,
    generatedAt: now().toISOString(),
    headline: options.headline ?? { name: 'composite', complement: false },
    activeVersion: active?.id ?? null,
    seedVersion: seed?.id ?? null,
    experiments,
    counts: {
      experiments: scores.length,
      evaluated: scores.filter((score) => score.decision !== 'skipped').length,
      accepted: scores.filter((score) => score.decision === 'accepted').length,
      refused: scores.filter((score) => score.decision === 'refused').length,
      skipped: scores.filter((score) => score.decision === 'skipped').length,
      byReason,
    },
    trail,
    runs,
    stop:
      finished === undefined ? null : { run: finished.id, reason: finished.stopReason!, detail: finished.stopDetail },
    runInProgress: await loadRunInProgress(db, options.studyDir, now),
    budget: { evaluations: await index.storedTotal(), metered },
    calibrations: await loadCalibrationHistory(db),
    registryEvents: await listRegistryEvents(db, 'active'),
    corpusMoves: await loadCorpusMoves(db),
  };
}

async function loadCorpusMoves(db: StudyDatabase): Promise<StudyOverview['corpusMoves']> {
  let rows: MembershipMoveRow[] = [];
  try {
    rows = (await readMembershipMoves(db)).filter((row) => row.experimentId !== null);
  } catch {
    return []; // a database without the corpus lifecycle
  }
  const moves = new Map<number, { afterExperiment: number; at: string; kinds: Record<string, number> }>();
  for (const row of rows) {
    const after = row.experimentId!;
    const entry = moves.get(after) ?? { afterExperiment: after, at: row.createdAt, kinds: {} };
    entry.kinds[row.kind] = (entry.kinds[row.kind] ?? 0) + 1;
    moves.set(after, entry);
  }
  return [...moves.values()].sort((left, right) => left.afterExperiment - right.afterExperiment);
}
