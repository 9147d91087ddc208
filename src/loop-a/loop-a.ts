/**
 * Loop A, the end-to-end loop (DESIGN.md §5): its evaluator scores what the
 * runtime builds from the corpus goals — compile success, structural quality
 * and gate pass rate, combined by `loopAScore` (0.5 × compile success rate +
 * 0.3 × mean structural-gate pass rate + 0.2 × share with all gates passed).
 * Its acceptance is human: candidates that pass its gate go to the review
 * queue, never straight to the registry.
 *
 * Phases, one function each: evaluate ({@link evaluateLoopA}), gate
 * ({@link decideLoopA}), and a run ({@link runLoopA}: propose → evaluate →
 * gate → record and enqueue).
 *
 * Invalid intents (the executor produced nothing usable) are counted as
 * invalid and never scored; comparisons use the examples valid for both
 * sides and say how many were left out.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { AssemblyMethod } from '../assembly/assemble.ts';
import type { BuildResult } from '../assembly/build-spec.ts';
import {
  loopAScore,
  STRUCTURAL_GATE_NAMES,
  type LoopAScore,
  type StructuralGateName,
  type StructuralGateResult,
} from '../assembly/gates.ts';
import type { Pattern } from '../assembly/pattern.ts';
import type { PatternLibrary } from '../assembly/pattern-library.ts';
import type { IntentExample, PartitionName } from '../corpus/example.ts';
import { asIntentExamples } from '../corpus/example.ts';
import { requireIntentTask } from '../study/compose.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { mapWithConcurrency } from '../evaluator/evaluator.ts';
import { perExampleMeans } from '../evaluator/partition-score.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { HistoryEntry } from '../proposers/proposer.ts';
import { createRuntime } from '../runtime/runtime.ts';
import { loadStudyPatternLibrary } from '../runtime/runtime.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { isoNow } from '../storage/database.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import { withArtifactOverride } from '../storage/registry.ts';
import { askProposer } from '../loop/propose.ts';
import type { Executor } from '../executors/executor.ts';
import type { Intent } from '../tasks/intent/intent.ts';
import type { Behavior } from '../tasks/intent/vocabulary.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { minePatternCandidates, type PatternMiningOptions } from './loop-a-patterns.ts';
import { enqueueReviewItem } from '../review/review-queue.ts';
import { ensureSeedVersion } from '../loop/run-study.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import { evaluationConcurrency } from '../loop/evaluate-partition.ts';
import { truncateText } from '../text/characters.ts';
import {
  closeLoopARun,
  loopADecidedHashes,
  openLoopARun,
  readLoopAProposalHistory,
  recordLoopADecision,
} from '../storage/notebook/loop-a-store.ts';

/** One example's Loop A outcome. */
export type LoopAExampleResult =
  | {
      id: string;
      partition: PartitionName;
      valid: true;
      intent: Intent;
      method: AssemblyMethod;
      /** Assembly confidence in [0, 1]. */
      confidence: number;
      patterns: string[];
      uncovered: { entities: string[]; behaviors: Behavior[] };
      build: BuildResult;
      gates: StructuralGateResult[];
      failedGates: StructuralGateName[];
      /** Gates passed / gates run, in [0, 1]. */
      gatePassRate: number;
      allGatesPassed: boolean;
    }
  | { id: string; partition: PartitionName; valid: false; invalidReason: string; message: string };

/** Loop A figures over a set of examples (valid ones only; invalid ones counted). */
export interface LoopASummary {
  examples: number;
  valid: number;
  invalid: number;
  /** `loopAScore(...).score`; null when nothing was valid. */
  composite: number | null;
  compileSuccessRate: number | null;
  meanGatePassRate: number | null;
  allGatesPassedRate: number | null;
  /** Mean assembly confidence; null when nothing was valid. */
  meanConfidence: number | null;
  methods: Record<AssemblyMethod, number>;
  /** Per structural gate: examples where it failed. */
  gateFailures: Record<StructuralGateName, number>;
}

/** A Loop A evaluation of one artifact and pattern library. */
export interface LoopAEvaluation extends LoopASummary {
  /** Content hash of the artifact. */
  artifactHash: string;
  /** Pattern ids of the library used. */
  patterns: string[];
  partitions: Partial<Record<PartitionName, LoopASummary>>;
  results: LoopAExampleResult[];
}

export interface EvaluateLoopAOptions {
  study: LoadedStudy;
  db: StudyDatabase;
  /** The artifact to evaluate; it runs through the registry's context-local override. */
  artifactText: string;
  /** Default: built-in + the study's `patterns/` folder. */
  library?: PatternLibrary | readonly Pattern[];
  /** Default: the whole corpus. */
  examples?: readonly IntentExample[];
  executor?: Executor;
  /** Concurrent runtime calls. Default 2 × the study's concurrency, at least the executor's `maxInFlight`. */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * Runs the runtime path (with signals off) on every example's goal, under a
 * context-local artifact override, and scores the results.
 */
export async function evaluateLoopA(options: EvaluateLoopAOptions): Promise<LoopAEvaluation> {
  const { study } = options;
  requireIntentTask(study, 'Loop A');
  const examples = options.examples ?? asIntentExamples(study.corpus);
  const runtime = await createRuntime({
    study,
    db: options.db,
    recordSignals: false,
    ...(options.library !== undefined ? { library: options.library } : {}),
    ...(options.executor !== undefined ? { executor: options.executor } : {}),
  });
  const results: LoopAExampleResult[] = new Array(examples.length);
  await withArtifactOverride(options.artifactText, () =>
    mapWithConcurrency(
      examples,
      Math.max(
        1,
        options.concurrency ??
          evaluationConcurrency({ concurrency: study.concurrency, executor: options.executor ?? study.executor }),
      ),
      async (example, index) => {
        if (options.signal?.aborted) throw options.signal.reason ?? new Error('aborted');
        const outcome = await runtime.build(
          example.input,
          options.signal !== undefined ? { signal: options.signal } : {},
        );
        if (!outcome.ok) {
          results[index] = {
            id: example.id,
            partition: example.partition,
            valid: false,
            invalidReason: outcome.invalid.reason,
            message: outcome.invalid.message,
          };
          return;
        }
        const failedGates = outcome.gates.filter((gate) => !gate.passed).map((gate) => gate.name);
        results[index] = {
          id: example.id,
          partition: example.partition,
          valid: true,
          intent: outcome.intent,
          method: outcome.assembly.method,
          confidence: outcome.assembly.confidence,
          patterns: outcome.assembly.patterns.map((use) => use.id),
          uncovered: outcome.assembly.uncovered,
          build: outcome.build,
          gates: outcome.gates,
          failedGates,
          gatePassRate:
            outcome.gates.length === 0 ? 0 : (outcome.gates.length - failedGates.length) / outcome.gates.length,
          allGatesPassed: outcome.gates.length > 0 && failedGates.length === 0,
        };
      },
    ),
  );
  const partitions: Partial<Record<PartitionName, LoopASummary>> = {};
  for (const name of PARTITIONS) {
    const members = results.filter((result) => result.partition === name);
    if (members.length > 0) partitions[name] = summarizeLoopA(members);
  }
  return {
    ...summarizeLoopA(results),
    artifactHash: contentHash(options.artifactText),
    patterns: runtime.library.patterns.map((pattern) => pattern.id),
    partitions,
    results,
  };
}

/** Loop A figures of a set of example results. */
export function summarizeLoopA(results: readonly LoopAExampleResult[]): LoopASummary {
  const valid = results.filter((result): result is Extract<LoopAExampleResult, { valid: true }> => result.valid);
  const score: LoopAScore = loopAScore(valid);
  const methods: Record<AssemblyMethod, number> = { direct: 0, decomposed: 0, partial: 0 };
  const gateFailures = Object.fromEntries(STRUCTURAL_GATE_NAMES.map((name) => [name, 0])) as Record<
    StructuralGateName,
    number
  >;
  for (const result of valid) {
    methods[result.method] += 1;
    for (const name of result.failedGates) gateFailures[name] += 1;
  }
  return {
    examples: results.length,
    valid: valid.length,
    invalid: results.length - valid.length,
    composite: score.score,
    compileSuccessRate: score.compileSuccessRate,
    meanGatePassRate: score.meanGatePassRate,
    allGatesPassedRate: score.allGatesPassedRate,
    meanConfidence:
      valid.length === 0 ? null : valid.reduce((sum, result) => sum + result.confidence, 0) / valid.length,
    methods,
    gateFailures,
  };
}

/** Settings of Loop A's gate. */
export interface LoopAGateSettings {
  /**
   * With an unchanged composite, the smallest rise of mean assembly
   * confidence that counts as an improvement (a pattern that covers a
   * recurring shape). Default 0.01.
   */
  minConfidenceGain: number;
  /** How far an anchor example's Loop B composite may drop. Default: the study's `gate.anchorTolerance`. */
  anchorTolerance: number;
}

/** One check of Loop A's gate, with its evidence. */
export interface LoopACheck {
  name: 'validity' | 'no-drop' | 'improvement' | 'anchors';
  passed: boolean;
  statistic: number | null;
  threshold: number | null;
  detail: string;
}

export type LoopARefusalReason =
  | 'invalid'
  | 'loop_a_drop'
  | 'no_improvement'
  | 'anchor_regression'
  | 'constraint'
  | 'duplicate';

/** Loop A's gate decision (typed, with every check's evidence). */
export type LoopADecision =
  | { passed: true; checks: LoopACheck[]; comparison: LoopAComparison }
  | { passed: false; reason: LoopARefusalReason; checks: LoopACheck[]; comparison: LoopAComparison | null };

/** Two Loop A evaluations over the examples valid for both. */
export interface LoopAComparison {
  /** Examples valid for both sides (the paired set). */
  paired: number;
  /** Left out because invalid on one side or both. */
  leftOut: number;
  incumbent: LoopASummary;
  candidate: LoopASummary;
  /** candidate − incumbent composite on the paired set. */
  compositeDelta: number | null;
  confidenceDelta: number | null;
  /** Per partition, composite delta on the paired set. */
  partitionDeltas: Partial<Record<PartitionName, number | null>>;
}

/** Compares two evaluations on the examples valid for both. */
export function compareLoopA(incumbent: LoopAEvaluation, candidate: LoopAEvaluation): LoopAComparison {
  const validIds = (evaluation: LoopAEvaluation): Set<string> =>
    new Set(evaluation.results.filter((result) => result.valid).map((result) => result.id));
  const incumbentValid = validIds(incumbent);
  const candidateValid = validIds(candidate);
  const both = new Set([...incumbentValid].filter((id) => candidateValid.has(id)));
  const allIds = new Set([...incumbent.results, ...candidate.results].map((result) => result.id));
  const pick = (evaluation: LoopAEvaluation, partition?: PartitionName): LoopAExampleResult[] =>
    evaluation.results.filter(
      (result) => both.has(result.id) && (partition === undefined || result.partition === partition),
    );
  const incumbentSummary = summarizeLoopA(pick(incumbent));
  const candidateSummary = summarizeLoopA(pick(candidate));
  const difference = (left: number | null, right: number | null): number | null =>
    left === null || right === null ? null : right - left;
  const partitionDeltas: Partial<Record<PartitionName, number | null>> = {};
  for (const name of PARTITIONS) {
    const before = pick(incumbent, name);
    if (before.length === 0) continue;
    partitionDeltas[name] = difference(
      summarizeLoopA(before).composite,
      summarizeLoopA(pick(candidate, name)).composite,
    );
  }
  return {
    paired: both.size,
    leftOut: allIds.size - both.size,
    incumbent: incumbentSummary,
    candidate: candidateSummary,
    compositeDelta: difference(incumbentSummary.composite, candidateSummary.composite),
    confidenceDelta: difference(incumbentSummary.meanConfidence, candidateSummary.meanConfidence),
    partitionDeltas,
  };
}

/** Floating-point slack when comparing composites. */
const EPSILON = 1e-9;

/**
 * Loop A's gate. A candidate goes to review only when all hold:
 * 1. validity — no more invalid intents than the incumbent;
 * 2. no-drop — the Loop A composite drops neither on the corpus nor on any
 *    partition (paired examples);
 * 3. improvement — the corpus composite rises, or stays equal while mean
 *    assembly confidence rises by at least `minConfidenceGain`;
 * 4. anchors — the Loop B composite does not regress on the anchor partition:
 *    no anchor example drops by more than `anchorTolerance`, none turns
 *    invalid (skipped, and said so, for a pattern: intents do not change).
 */
export function decideLoopA(
  input: {
    incumbent: LoopAEvaluation;
    candidate: LoopAEvaluation;
    /** Loop B scores on the anchor partition; null when the candidate cannot change intents. */
    anchors: { incumbent: PartitionScore; candidate: PartitionScore } | null;
  },
  settings: LoopAGateSettings,
): LoopADecision {
  const checks: LoopACheck[] = [];
  const comparison = compareLoopA(input.incumbent, input.candidate);
  const refuse = (reason: LoopARefusalReason): LoopADecision => ({ passed: false, reason, checks, comparison });

  const validity = input.candidate.invalid <= input.incumbent.invalid;
  checks.push({
    name: 'validity',
    passed: validity,
    statistic: input.candidate.invalid,
    threshold: input.incumbent.invalid,
    detail: `${input.candidate.invalid} invalid intents (incumbent ${input.incumbent.invalid})`,
  });
  if (!validity) return refuse('invalid');

  const drops = Object.entries(comparison.partitionDeltas).filter(([, delta]) => delta !== null && delta < -EPSILON);
  const corpusDelta = comparison.compositeDelta ?? 0;
  const noDrop = corpusDelta >= -EPSILON && drops.length === 0;
  checks.push({
    name: 'no-drop',
    passed: noDrop,
    statistic: comparison.compositeDelta,
    threshold: 0,
    detail: `Δ composite ${formatSigned(comparison.compositeDelta)} on ${comparison.paired} paired examples (${comparison.leftOut} left out: invalid on a side)${drops.length > 0 ? `; drops on ${drops.map(([name, delta]) => `${name} ${formatSigned(delta)}`).join(', ')}` : ''}`,
  });
  if (!noDrop) return refuse('loop_a_drop');

  const confidenceDelta = comparison.confidenceDelta ?? 0;
  const improved =
    corpusDelta > EPSILON ||
    (Math.abs(corpusDelta) <= EPSILON && confidenceDelta >= settings.minConfidenceGain - EPSILON);
  checks.push({
    name: 'improvement',
    passed: improved,
    statistic: corpusDelta > EPSILON ? corpusDelta : confidenceDelta,
    threshold: corpusDelta > EPSILON ? 0 : settings.minConfidenceGain,
    detail:
      corpusDelta > EPSILON
        ? `composite rises by ${formatSigned(corpusDelta)}`
        : `composite unchanged; mean confidence ${formatSigned(comparison.confidenceDelta)} (needs ≥ ${settings.minConfidenceGain})`,
  });
  if (!improved) return refuse('no_improvement');

  if (input.anchors === null) {
    checks.push({
      name: 'anchors',
      passed: true,
      statistic: null,
      threshold: null,
      detail: 'skipped: the candidate does not change intents, so Loop B scores are unchanged',
    });
    return { passed: true, checks, comparison };
  }
  const before = perExampleMeans(input.anchors.incumbent);
  const after = perExampleMeans(input.anchors.candidate);
  const regressions: string[] = [];
  let worst = 0;
  for (const [id, score] of before) {
    const now = after.get(id);
    if (now === undefined) regressions.push(`${id} turned invalid`);
    else if (score - now > settings.anchorTolerance + EPSILON) regressions.push(`${id} ${formatSigned(now - score)}`);
    if (now !== undefined) worst = Math.min(worst, now - score);
  }
  const anchorsPassed = regressions.length === 0;
  checks.push({
    name: 'anchors',
    passed: anchorsPassed,
    statistic: worst,
    threshold: -settings.anchorTolerance,
    detail: anchorsPassed
      ? `no anchor regresses (Loop B anchor composite ${formatScore(input.anchors.incumbent.composite)} → ${formatScore(input.anchors.candidate.composite)})`
      : `${regressions.length} anchor regression(s): ${regressions.slice(0, 8).join('; ')}`,
  });
  if (!anchorsPassed) return refuse('anchor_regression');
  return { passed: true, checks, comparison };
}

function formatSigned(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return `${value >= 0 ? '+' : ''}${value.toFixed(4)}`;
}

function formatScore(value: number | null): string {
  return value === null ? '—' : value.toFixed(4);
}

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

/**
 * The candidates a Loop B round would propose from the incumbent, asked
 * through the loop's own propose phase (`askProposer`, src/loop/propose.ts):
 * the same context (optimization partition only, the task's output
 * contract), seeded as a Loop B round would be — round = the history's
 * length, attempt 1 (`proposalSeed`), so a Loop A run proposes what it did
 * before this function used the engine's phase.
 */
async function proposeArtifacts(
  study: LoadedStudy,
  db: StudyDatabase,
  incumbent: ArtifactVersion,
  triedByLoopA: ReadonlySet<string>,
  failures: string[],
  signal: AbortSignal | undefined,
): Promise<Array<{ text: string; delta: string; rationale: string; flags?: string[] }>> {
  const evaluator = createStudyEvaluator(study, db);
  const scratch = createStudyEvaluator(study);
  const incumbentScores = await evaluatePartition(evaluator, study, incumbent.text, 'optimization', signal);
  const stored = await readLoopAProposalHistory(db);
  const history: HistoryEntry[] = [
    ...stored.experiments.map((row) => ({
      delta: row.delta,
      decision: row.decision as HistoryEntry['decision'],
      reason: row.reason,
    })),
    ...stored.loopADecisions.map((row) => ({
      delta: row.delta,
      decision: row.decision === 'refused' ? ('refused' as const) : ('skipped' as const),
      reason: `loop A: ${row.reason}`,
    })),
  ];
  const triedHashes = new Set([
    ...stored.experiments.map((row) => row.candidateHash),
    ...stored.versionHashes,
    ...triedByLoopA,
  ]);
  try {
    const proposal = await askProposer({
      study,
      base: incumbent,
      baseOptimization: incumbentScores,
      prior: { history, deltas: history.map((entry) => entry.delta), triedHashes, failedEvaluations: new Map() },
      round: history.length,
      attempt: 1,
      evaluateOptimization: (text) =>
        withArtifactOverride(text, () =>
          scratch.evaluate({
            artifactText: text,
            partition: 'optimization',
            examples: study.partitions.optimization,
            repeats: study.gate.repeats,
          }),
        ),
      ...(signal !== undefined ? { signal } : {}),
    });
    failures.push(...proposal.failures.map((failure) => failure.reason));
    return proposal.candidates;
  } catch (error) {
    if (signal?.aborted) throw error;
    failures.push(`the proposer failed: ${error instanceof Error ? error.message : String(error)}`);
    return [];
  }
}

/** The stored Loop A runs, newest first (`limit`, default 20). */
export { listLoopARuns } from '../storage/notebook/loop-a-store.ts';
