/**
 * Loop A's evaluator (DESIGN.md §5): scores what the runtime builds from the
 * corpus goals — compile success, structural quality and gate pass rate,
 * combined by `loopAScore` (0.5 × compile success rate + 0.3 × mean
 * structural-gate pass rate + 0.2 × share with all gates passed).
 *
 * Invalid intents (the executor produced nothing usable) are counted as
 * invalid and never scored.
 *
 * @module
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
import type { PartitionName } from '../corpus/example.ts';
import type { IntentExample } from '../corpus/intent-example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { asIntentExamples } from '../corpus/intent-example.ts';
import { requireIntentTask } from '../study/compose.ts';
import { mapWithConcurrency } from '../evaluator/evaluator.ts';
import { createRuntime } from '../runtime/runtime.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { withArtifactOverride } from '../storage/registry.ts';
import type { Executor } from '../executors/executor.ts';
import type { Intent } from '../tasks/intent/intent.ts';
import type { Behavior } from '../tasks/intent/vocabulary.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { evaluationConcurrency } from '../loop/evaluate-partition.ts';

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
