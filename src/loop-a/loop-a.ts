/**
 * Loop A, the end-to-end loop (DESIGN.md §5): its evaluator scores what the
 * runtime builds from the corpus goals (src/loop-a/loop-a-evaluate.ts), its
 * gate compares two such evaluations (src/loop-a/loop-a-gate.ts). Its
 * acceptance is human: candidates that pass its gate go to the review queue,
 * never straight to the registry.
 *
 * Phases, one function each: evaluate ({@link evaluateLoopA}), gate
 * ({@link decideLoopA}), propose (src/loop-a/loop-a-propose.ts and
 * src/loop-a/loop-a-patterns.ts), and a run ({@link runLoopA}: propose →
 * evaluate → gate → record and enqueue). This module is Loop A's public face:
 * the run, with the evaluator's and the gate's exports.
 */
import { asIntentExamples } from '../corpus/intent-example.ts';
import { requireIntentTask } from '../study/compose.ts';
import { loadStudyPatternLibrary } from '../runtime/runtime.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { isoNow } from '../storage/study-database.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import type { PatternCandidate, PatternMiningOptions } from './loop-a-patterns.ts';
import { minePatternCandidates } from './loop-a-patterns.ts';
import { ensureSeedVersion } from '../loop/run-study.ts';
import { createStudyEvaluator } from '../loop/evaluate-partition.ts';
import { closeLoopARun, loopADecidedHashes, openLoopARun } from '../storage/notebook/loop-a-store.ts';
import type { LoopASummary } from './loop-a-evaluate.ts';
import { evaluateLoopA, summarizeLoopA } from './loop-a-evaluate.ts';
import type { LoopAGateSettings } from './loop-a-gate.ts';
import { proposeArtifacts } from './loop-a-propose.ts';
import type {
  ArtifactCandidate,
  LoopACandidateOutcome,
  LoopAEvent,
  LoopARunContext,
  LoopBAnchors,
} from './loop-a-candidates.ts';
import { decideArtifactCandidate, decidePatternCandidate } from './loop-a-candidates.ts';
import { openNotebook } from '../storage/notebook/index.ts';

export type { LoopACandidateOutcome, LoopAEvent } from './loop-a-candidates.ts';
export type {
  EvaluateLoopAOptions,
  LoopAEvaluation,
  LoopAExampleResult,
  LoopASummary,
} from './loop-a-evaluate.ts';
export { evaluateLoopA, summarizeLoopA } from './loop-a-evaluate.ts';
export type {
  LoopACheck,
  LoopAComparison,
  LoopADecision,
  LoopAGateSettings,
  LoopARefusalReason,
} from './loop-a-gate.ts';
export { compareLoopA, decideLoopA } from './loop-a-gate.ts';

export interface LoopARunOptions {
  study: LoadedStudy;
  db: StudyDatabase;
  settings?: Partial<LoopAGateSettings>;
  mining?: PatternMiningOptions;
  /** Propose playbook edits with the study's proposer. Default true. */
  proposeArtifacts?: boolean;
  /** Propose candidate patterns for uncovered shapes. Default true. */
  proposePatterns?: boolean;
  onEvent?: (event: LoopAEvent) => void;
  signal?: AbortSignal;
  now?: () => Date;
}

/** What a Loop A run did. */
export interface LoopARunOutcome {
  runId: number;
  incumbentVersionId: number;
  incumbent: LoopASummary;
  proposalFailures: string[];
  candidates: LoopACandidateOutcome[];
  queued: number;
  refused: number;
  skipped: number;
}

/**
 * One Loop A run: evaluate the incumbent (active artifact + library), propose
 * playbook edits (the study's proposer, reading the optimization partition
 * only) and candidate patterns, gate each, and send what passes to the review
 * queue. Every candidate and decision is recorded in `loop_a_decisions`; the
 * run in `loop_a_runs`. Nothing is activated.
 */
export async function runLoopA(options: LoopARunOptions): Promise<LoopARunOutcome> {
  const { study, db } = options;
  requireIntentTask(study, 'Loop A');
  const now = options.now ?? (() => new Date());
  const emit = options.onEvent ?? (() => undefined);
  const settings: LoopAGateSettings = {
    minConfidenceGain: options.settings?.minConfidenceGain ?? 0.01,
    anchorTolerance: options.settings?.anchorTolerance ?? study.gate.anchorTolerance,
  };
  const incumbentVersion = await ensureSeedVersion(openNotebook(db), study, now);
  const runId = await openLoopARun(db, { startedAt: isoNow(now), incumbentVersionId: incumbentVersion.id });
  try {
    const library = loadStudyPatternLibrary(study.dir);
    const incumbent = await evaluateLoopA({
      study,
      db,
      artifactText: incumbentVersion.text,
      library,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
    emit({ type: 'start', runId, incumbentVersionId: incumbentVersion.id, composite: incumbent.composite });
    const context: LoopARunContext = {
      study,
      db,
      runId,
      incumbentVersion,
      incumbent,
      library,
      settings,
      now,
      emit,
      tried: await loopADecidedHashes(db),
      candidates: [],
      signal: options.signal,
    };
    const proposalFailures: string[] = [];
    const proposed = await proposeCandidates(context, options, proposalFailures);
    const anchors: LoopBAnchors = { evaluator: createStudyEvaluator(study, openNotebook(db)) };
    for (const candidate of proposed.artifacts) {
      if (options.signal?.aborted) break;
      await decideArtifactCandidate(context, candidate, anchors);
    }
    for (const candidate of proposed.patterns) {
      if (options.signal?.aborted) break;
      await decidePatternCandidate(context, candidate);
    }
    const outcome = runOutcome(context, proposalFailures);
    const candidates = outcome.candidates.map(({ checks: _checks, ...rest }) => rest);
    await closeLoopARun(db, runId, {
      endedAt: isoNow(now),
      status: options.signal?.aborted ? 'interrupted' : 'done',
      report: { ...outcome, candidates },
    });
    return outcome;
  } catch (error) {
    // An abort (Ctrl-C, a lost lease) that surfaced as an error is an interruption, not a failure.
    const interrupted = options.signal?.aborted === true;
    await closeLoopARun(db, runId, {
      endedAt: isoNow(now),
      status: interrupted ? 'interrupted' : 'failed',
      report: { [interrupted ? 'interrupted' : 'error']: error instanceof Error ? error.message : String(error) },
    });
    throw error;
  }
}

/**
 * A run's candidates: playbook edits (what a Loop B round would propose) and
 * candidate patterns (mined from the incumbent's results on the optimization
 * partition), each unless its option turns it off; emits `proposed`.
 */
async function proposeCandidates(
  context: LoopARunContext,
  options: LoopARunOptions,
  failures: string[],
): Promise<{ artifacts: ArtifactCandidate[]; patterns: PatternCandidate[] }> {
  const { study, db, incumbent } = context;
  const artifacts =
    options.proposeArtifacts === false
      ? []
      : await proposeArtifacts(study, db, context.incumbentVersion, context.tried, failures, options.signal);
  const optimizationResults = incumbent.results.flatMap((result) => {
    if (!result.valid) return [];
    const example = asIntentExamples(study.partitions.optimization).find((member) => member.id === result.id);
    return example === undefined
      ? []
      : [{ example, intent: result.intent, method: result.method, uncovered: result.uncovered }];
  });
  const patterns =
    options.proposePatterns === false
      ? []
      : minePatternCandidates(optimizationResults, context.library, options.mining);
  context.emit({
    type: 'proposed',
    artifacts: artifacts.length,
    patterns: patterns.length,
    failures: failures.length,
  });
  return { artifacts, patterns };
}

/** What a run did, from its context once every candidate is decided. */
function runOutcome(context: LoopARunContext, proposalFailures: string[]): LoopARunOutcome {
  const { candidates } = context;
  return {
    runId: context.runId,
    incumbentVersionId: context.incumbentVersion.id,
    incumbent: summarizeLoopA(context.incumbent.results),
    proposalFailures,
    candidates,
    queued: candidates.filter((candidate) => candidate.decision === 'queued').length,
    refused: candidates.filter((candidate) => candidate.decision === 'refused').length,
    skipped: candidates.filter((candidate) => candidate.decision === 'skipped').length,
  };
}

/** The stored Loop A runs, newest first (`limit`, default 20). */
export { listLoopARuns } from '../storage/notebook/loop-a-store.ts';
