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
import { contentHash } from '../artifact/content-hash.ts';
import type { Pattern } from '../assembly/pattern.ts';
import type { PatternLibrary } from '../assembly/pattern-library.ts';
import { asIntentExamples } from '../corpus/example.ts';
import { requireIntentTask } from '../study/compose.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { loadStudyPatternLibrary } from '../runtime/runtime.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { isoNow } from '../storage/database.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { minePatternCandidates, type PatternMiningOptions } from './loop-a-patterns.ts';
import { enqueueReviewItem } from '../review/review-queue.ts';
import { ensureSeedVersion } from '../loop/run-study.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import { truncateText } from '../text/characters.ts';
import {
  closeLoopARun,
  loopADecidedHashes,
  openLoopARun,
  recordLoopADecision,
} from '../storage/notebook/loop-a-store.ts';
import type { LoopAEvaluation, LoopASummary } from './loop-a-evaluate.ts';
import { evaluateLoopA, summarizeLoopA } from './loop-a-evaluate.ts';
import type { LoopACheck, LoopADecision, LoopAGateSettings } from './loop-a-gate.ts';
import { decideLoopA } from './loop-a-gate.ts';
import { proposeArtifacts } from './loop-a-propose.ts';

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

/** Progress of a Loop A run. */
export type LoopAEvent =
  | { type: 'start'; runId: number; incumbentVersionId: number; composite: number | null }
  | { type: 'proposed'; artifacts: number; patterns: number; failures: number }
  | {
      type: 'decision';
      kind: 'artifact' | 'pattern';
      delta: string;
      decision: 'queued' | 'refused' | 'skipped';
      reason: string;
      reviewItemId: number | null;
      compositeDelta: number | null;
    };

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

/** One decided candidate of a run. */
export interface LoopACandidateOutcome {
  decisionId: number;
  kind: 'artifact' | 'pattern';
  delta: string;
  rationale: string;
  decision: 'queued' | 'refused' | 'skipped';
  reason: string;
  reviewItemId: number | null;
  checks: LoopACheck[];
  compositeDelta: number | null;
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
  const incumbentVersion = await ensureSeedVersion(db, study, now);
  const runId = await openLoopARun(db, { startedAt: isoNow(now), incumbentVersionId: incumbentVersion.id });
  const candidates: LoopACandidateOutcome[] = [];
  const proposalFailures: string[] = [];
  try {
    const library = loadStudyPatternLibrary(study.dir);
    const evaluate = (
      artifactText: string,
      patterns: PatternLibrary | readonly Pattern[] = library,
    ): Promise<LoopAEvaluation> =>
      evaluateLoopA({
        study,
        db,
        artifactText,
        library: patterns,
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
      });
    const incumbent = await evaluate(incumbentVersion.text);
    emit({ type: 'start', runId, incumbentVersionId: incumbentVersion.id, composite: incumbent.composite });
    const tried = await loopADecidedHashes(db);

    const record = async (
      outcome: Omit<LoopACandidateOutcome, 'decisionId'>,
      hash: string,
      evidence: unknown,
    ): Promise<void> => {
      const decisionId = await recordLoopADecision(db, {
        runId,
        kind: outcome.kind,
        candidateHash: hash,
        delta: outcome.delta,
        rationale: outcome.rationale,
        decision: outcome.decision,
        reason: outcome.reason,
        evidence,
        reviewItemId: outcome.reviewItemId,
        createdAt: isoNow(now),
      });
      tried.add(hash);
      candidates.push({ ...outcome, decisionId });
      emit({
        type: 'decision',
        kind: outcome.kind,
        delta: outcome.delta,
        decision: outcome.decision,
        reason: outcome.reason,
        reviewItemId: outcome.reviewItemId,
        compositeDelta: outcome.compositeDelta,
      });
    };
    const evidenceOf = (decision: LoopADecision, extra: Record<string, unknown>): Record<string, unknown> => ({
      ...extra,
      checks: decision.checks,
      loopA:
        decision.comparison === null
          ? null
          : {
              paired: decision.comparison.paired,
              leftOut: decision.comparison.leftOut,
              incumbent: decision.comparison.incumbent,
              candidate: decision.comparison.candidate,
              compositeDelta: decision.comparison.compositeDelta,
              confidenceDelta: decision.comparison.confidenceDelta,
              partitionDeltas: decision.comparison.partitionDeltas,
            },
    });

    // Propose: playbook edits (what a Loop B round would propose) and candidate patterns.
    const artifactCandidates =
      options.proposeArtifacts === false
        ? []
        : await proposeArtifacts(study, db, incumbentVersion, tried, proposalFailures, options.signal);
    const optimizationResults = incumbent.results.flatMap((result) => {
      if (!result.valid) return [];
      const example = asIntentExamples(study.partitions.optimization).find((member) => member.id === result.id);
      return example === undefined
        ? []
        : [{ example, intent: result.intent, method: result.method, uncovered: result.uncovered }];
    });
    const patternCandidates =
      options.proposePatterns === false ? [] : minePatternCandidates(optimizationResults, library, options.mining);
    emit({
      type: 'proposed',
      artifacts: artifactCandidates.length,
      patterns: patternCandidates.length,
      failures: proposalFailures.length,
    });

    // Artifact candidates: Loop A on the corpus, Loop B on the anchors.
    const loopB = createStudyEvaluator(study, db);
    let incumbentAnchors: PartitionScore | undefined;
    for (const candidate of artifactCandidates) {
      if (options.signal?.aborted) break;
      const hash = contentHash(candidate.text);
      const base = { kind: 'artifact' as const, delta: candidate.delta, rationale: candidate.rationale };
      if (tried.has(hash)) {
        await record(
          { ...base, decision: 'skipped', reason: 'duplicate', reviewItemId: null, checks: [], compositeDelta: null },
          hash,
          { detail: 'already decided by Loop A' },
        );
        continue;
      }
      const constraints = study.constraints.check(incumbentVersion.text, candidate.text);
      if (!constraints.passed) {
        await record(
          { ...base, decision: 'refused', reason: 'constraint', reviewItemId: null, checks: [], compositeDelta: null },
          hash,
          { violations: constraints.violations },
        );
        continue;
      }
      const evaluation = await evaluate(candidate.text);
      incumbentAnchors ??= await evaluatePartition(loopB, study, incumbentVersion.text, 'anchor', options.signal);
      const candidateAnchors = await evaluatePartition(loopB, study, candidate.text, 'anchor', options.signal);
      const decision = decideLoopA(
        { incumbent, candidate: evaluation, anchors: { incumbent: incumbentAnchors, candidate: candidateAnchors } },
        settings,
      );
      const evidence = evidenceOf(decision, {
        flags: candidate.flags ?? [],
        loopBAnchors: {
          incumbent: incumbentAnchors.composite,
          candidate: candidateAnchors.composite,
          fingerprint: loopB.fingerprint,
        },
      });
      let reviewItemId: number | null = null;
      if (decision.passed) {
        const queued = await enqueueReviewItem(
          db,
          {
            kind: 'artifact',
            source: 'loop-a',
            title: truncateText(`playbook edit: ${candidate.delta}`, 200, ''),
            payload: {
              text: candidate.text,
              baseVersionId: incumbentVersion.id,
              delta: candidate.delta,
              rationale: candidate.rationale,
            },
            evidence,
            runId,
          },
          now,
        );
        reviewItemId = queued.item.id;
      }
      await record(
        {
          ...base,
          decision: decision.passed ? 'queued' : 'refused',
          reason: decision.passed ? 'queued' : decision.reason,
          reviewItemId,
          checks: decision.checks,
          compositeDelta: decision.comparison?.compositeDelta ?? null,
        },
        hash,
        evidence,
      );
    }

    // Pattern candidates: Loop A on the corpus with the pattern added (intents, so Loop B, unchanged).
    for (const candidate of patternCandidates) {
      if (options.signal?.aborted) break;
      const hash = contentHash(`pattern\n${candidate.yaml}`);
      const base = { kind: 'pattern' as const, delta: candidate.delta, rationale: candidate.rationale };
      if (tried.has(hash)) {
        await record(
          { ...base, decision: 'skipped', reason: 'duplicate', reviewItemId: null, checks: [], compositeDelta: null },
          hash,
          { detail: 'already decided by Loop A' },
        );
        continue;
      }
      const evaluation = await evaluate(incumbentVersion.text, [...library.patterns, candidate.pattern]);
      const decision = decideLoopA({ incumbent, candidate: evaluation, anchors: null }, settings);
      const evidence = evidenceOf(decision, { support: candidate.support });
      let reviewItemId: number | null = null;
      if (decision.passed) {
        const queued = await enqueueReviewItem(
          db,
          {
            kind: 'pattern',
            source: 'loop-a',
            title: truncateText(`new pattern ${candidate.pattern.id}: ${candidate.pattern.title}`, 200, ''),
            payload: { name: candidate.pattern.id, yaml: candidate.yaml },
            evidence,
            runId,
          },
          now,
        );
        reviewItemId = queued.item.id;
      }
      await record(
        {
          ...base,
          decision: decision.passed ? 'queued' : 'refused',
          reason: decision.passed ? 'queued' : decision.reason,
          reviewItemId,
          checks: decision.checks,
          compositeDelta: decision.comparison?.compositeDelta ?? null,
        },
        hash,
        evidence,
      );
    }

    const outcome: LoopARunOutcome = {
      runId,
      incumbentVersionId: incumbentVersion.id,
      incumbent: summarizeLoopA(incumbent.results),
      proposalFailures,
      candidates,
      queued: candidates.filter((candidate) => candidate.decision === 'queued').length,
      refused: candidates.filter((candidate) => candidate.decision === 'refused').length,
      skipped: candidates.filter((candidate) => candidate.decision === 'skipped').length,
    };
    await closeLoopARun(db, runId, {
      endedAt: isoNow(now),
      status: options.signal?.aborted ? 'interrupted' : 'done',
      report: { ...outcome, candidates: candidates.map(({ checks: _checks, ...rest }) => rest) },
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

/** The stored Loop A runs, newest first (`limit`, default 20). */
export { listLoopARuns } from '../storage/notebook/loop-a-store.ts';
