/**
 * One Loop A candidate, decided and recorded: a duplicate is skipped, an
 * artifact edit that breaks a constraint is refused, any other is evaluated
 * by Loop A's evaluator and judged by its gate; what passes goes to the
 * review queue. Every decision is one row of `loop_a_decisions` and one
 * `decision` event. The run ({@link runLoopA} in src/loop-a/loop-a.ts)
 * calls these in turn for each candidate it proposed.
 *
 * @module
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { Pattern } from '../assembly/pattern.ts';
import type { PatternLibrary } from '../assembly/pattern-library.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { evaluatePartition } from '../loop/evaluate-partition.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import type { NewReviewItem } from '../review/review-queue.ts';
import { enqueueReviewItem } from '../review/review-queue.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { isoNow } from '../storage/study-database.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import { recordLoopADecision } from '../storage/notebook/loop-a-store.ts';
import { truncateText } from '../text/characters.ts';
import type { LoopAEvaluation } from './loop-a-evaluate.ts';
import { evaluateLoopA } from './loop-a-evaluate.ts';
import type { LoopACheck, LoopADecision, LoopAGateSettings } from './loop-a-gate.ts';
import { decideLoopA } from './loop-a-gate.ts';
import type { PatternCandidate } from './loop-a-patterns.ts';

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

/** A playbook edit proposed for Loop A (src/loop-a/loop-a-propose.ts). */
export interface ArtifactCandidate {
  text: string;
  delta: string;
  rationale: string;
  flags?: string[];
}

/** What deciding a candidate reads and writes: the run's state, shared by every candidate of the run. */
export interface LoopARunContext {
  study: LoadedStudy;
  db: StudyDatabase;
  runId: number;
  incumbentVersion: ArtifactVersion;
  /** Loop A's evaluation of the incumbent (active artifact + library). */
  incumbent: LoopAEvaluation;
  library: PatternLibrary;
  settings: LoopAGateSettings;
  /** Candidate hashes already decided (by earlier runs and this one); a decision adds its hash. */
  tried: Set<string>;
  /** This run's decisions, in order; a decision is appended. */
  candidates: LoopACandidateOutcome[];
  now: () => Date;
  emit: (event: LoopAEvent) => void;
  signal: AbortSignal | undefined;
}

/** The Loop B evaluator of the anchor check, with the incumbent's anchor scores once measured. */
export interface LoopBAnchors {
  evaluator: Evaluator;
  incumbent?: PartitionScore;
}

type CandidateBase = Pick<LoopACandidateOutcome, 'kind' | 'delta' | 'rationale'>;

/** Loop A's evaluation of an artifact text with a pattern library (default: the run's). */
function evaluateInRun(
  context: LoopARunContext,
  artifactText: string,
  patterns: PatternLibrary | readonly Pattern[] = context.library,
): Promise<LoopAEvaluation> {
  return evaluateLoopA({
    study: context.study,
    db: context.db,
    artifactText,
    library: patterns,
    ...(context.signal !== undefined ? { signal: context.signal } : {}),
  });
}

/** Records a decision (`loop_a_decisions`), marks its hash tried, appends it to the run's and emits it. */
async function recordDecision(
  context: LoopARunContext,
  outcome: Omit<LoopACandidateOutcome, 'decisionId'>,
  hash: string,
  evidence: unknown,
): Promise<void> {
  const decisionId = await recordLoopADecision(context.db, {
    runId: context.runId,
    kind: outcome.kind,
    candidateHash: hash,
    delta: outcome.delta,
    rationale: outcome.rationale,
    decision: outcome.decision,
    reason: outcome.reason,
    evidence,
    reviewItemId: outcome.reviewItemId,
    createdAt: isoNow(context.now),
  });
  context.tried.add(hash);
  context.candidates.push({ ...outcome, decisionId });
  context.emit({
    type: 'decision',
    kind: outcome.kind,
    delta: outcome.delta,
    decision: outcome.decision,
    reason: outcome.reason,
    reviewItemId: outcome.reviewItemId,
    compositeDelta: outcome.compositeDelta,
  });
}

/** Records a candidate decided without the gate (a duplicate skipped, a constraint refusal). */
function recordUngated(
  context: LoopARunContext,
  base: CandidateBase,
  verdict: { decision: 'skipped' | 'refused'; reason: string },
  hash: string,
  evidence: unknown,
): Promise<void> {
  return recordDecision(
    context,
    { ...base, ...verdict, reviewItemId: null, checks: [], compositeDelta: null },
    hash,
    evidence,
  );
}

/** Skips a candidate Loop A already decided (in this run or an earlier one); true when it did. */
async function skippedAsDuplicate(context: LoopARunContext, base: CandidateBase, hash: string): Promise<boolean> {
  if (!context.tried.has(hash)) return false;
  await recordUngated(context, base, { decision: 'skipped', reason: 'duplicate' }, hash, {
    detail: 'already decided by Loop A',
  });
  return true;
}

/** The stored evidence of a gate decision: `extra`, the checks, and the Loop A comparison. */
function evidenceOf(decision: LoopADecision, extra: Record<string, unknown>): Record<string, unknown> {
  return {
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
  };
}

/**
 * Records a gate decision: a passed candidate is queued for review first
 * (`review`), then the decision is recorded with the review item's id; a
 * refused one is recorded with the gate's reason.
 */
async function recordGated(
  context: LoopARunContext,
  base: CandidateBase,
  hash: string,
  decision: LoopADecision,
  evidence: Record<string, unknown>,
  review: NewReviewItem,
): Promise<void> {
  let reviewItemId: number | null = null;
  if (decision.passed) {
    const queued = await enqueueReviewItem(context.db, review, context.now);
    reviewItemId = queued.item.id;
  }
  await recordDecision(
    context,
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

/** Decides a playbook edit: Loop A on the corpus, Loop B on the anchors. */
export async function decideArtifactCandidate(
  context: LoopARunContext,
  candidate: ArtifactCandidate,
  anchors: LoopBAnchors,
): Promise<void> {
  const { study, incumbentVersion, signal } = context;
  const hash = contentHash(candidate.text);
  const base = { kind: 'artifact' as const, delta: candidate.delta, rationale: candidate.rationale };
  if (await skippedAsDuplicate(context, base, hash)) return;
  const constraints = study.constraints.check(incumbentVersion.text, candidate.text);
  if (!constraints.passed) {
    await recordUngated(context, base, { decision: 'refused', reason: 'constraint' }, hash, {
      violations: constraints.violations,
    });
    return;
  }
  const evaluation = await evaluateInRun(context, candidate.text);
  anchors.incumbent ??= await evaluatePartition(anchors.evaluator, study, incumbentVersion.text, 'anchor', signal);
  const candidateAnchors = await evaluatePartition(anchors.evaluator, study, candidate.text, 'anchor', signal);
  const decision = decideLoopA(
    {
      incumbent: context.incumbent,
      candidate: evaluation,
      anchors: { incumbent: anchors.incumbent, candidate: candidateAnchors },
    },
    context.settings,
  );
  const evidence = evidenceOf(decision, {
    flags: candidate.flags ?? [],
    loopBAnchors: {
      incumbent: anchors.incumbent.composite,
      candidate: candidateAnchors.composite,
      fingerprint: anchors.evaluator.fingerprint,
    },
  });
  await recordGated(context, base, hash, decision, evidence, {
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
    runId: context.runId,
  });
}

/** Decides a candidate pattern: Loop A on the corpus with the pattern added (intents, so Loop B, unchanged). */
export async function decidePatternCandidate(context: LoopARunContext, candidate: PatternCandidate): Promise<void> {
  const hash = contentHash(`pattern\n${candidate.yaml}`);
  const base = { kind: 'pattern' as const, delta: candidate.delta, rationale: candidate.rationale };
  if (await skippedAsDuplicate(context, base, hash)) return;
  const evaluation = await evaluateInRun(context, context.incumbentVersion.text, [
    ...context.library.patterns,
    candidate.pattern,
  ]);
  const decision = decideLoopA(
    { incumbent: context.incumbent, candidate: evaluation, anchors: null },
    context.settings,
  );
  const evidence = evidenceOf(decision, { support: candidate.support });
  await recordGated(context, base, hash, decision, evidence, {
    kind: 'pattern',
    source: 'loop-a',
    title: truncateText(`new pattern ${candidate.pattern.id}: ${candidate.pattern.title}`, 200, ''),
    payload: { name: candidate.pattern.id, yaml: candidate.yaml },
    evidence,
    runId: context.runId,
  });
}
