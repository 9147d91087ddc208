import path from 'node:path';
import { LOOP_A_WEIGHTS, STRUCTURAL_GATE_NAMES } from '../../assembly/gates.ts';
import type { PartitionName } from '../../corpus/example.ts';
import { PARTITIONS } from '../../corpus/example.ts';
import { asIntentExamples } from '../../corpus/intent-example.ts';
import { InputError } from '../../errors.ts';
import { databaseExists, studyDatabaseLocation } from '../../storage/database.ts';
import { getRegistryVersion } from '../../storage/registry.ts';
import { readTextFile } from '../../study/load-study.ts';
import type {
  LoopAEvaluation,
  LoopAEvent,
  LoopAExampleResult,
  LoopARunOutcome,
  LoopASummary,
} from '../../loop-a/loop-a.ts';
import { evaluateLoopA, runLoopA } from '../../loop-a/loop-a.ts';
import { formatDelta, formatScore, print, printJson, progress, table } from '../output.ts';
import { failWhenNothingValid } from './corpus.ts';
import { EXIT } from '../session/exit-codes.ts';
import { runSession } from '../session/session-runner.ts';
import type { ModelOptions } from './study-session.ts';
import { isStudyWritable, openStudy, refuseNonIntentStudy } from './study-session.ts';

/** The loops `--loop` accepts. */
export type LoopName = 'A' | 'B';

/** Parses `--loop` (case-insensitive; default B). @throws InputError */
export function parseLoopOption(value: string | undefined): LoopName {
  if (value === undefined) return 'B';
  const upper = value.trim().toUpperCase();
  if (upper === 'A' || upper === 'B') return upper;
  throw new InputError(
    `unknown loop "${value}"; expected A (end-to-end, human review) or B (intent prompt, automatic ratchet)`,
    { field: '--loop' },
  );
}

export interface EvalLoopAOptions extends ModelOptions {
  partition?: string;
  artifact?: string;
  json?: boolean;
  quiet?: boolean;
  corpus?: string;
}

/** `kloop eval <study> --loop A`. */
export async function evalLoopACommand(studyDir: string, options: EvalLoopAOptions): Promise<void> {
  refuseNonIntentStudy(studyDir, 'Loop A (eval --loop A)');
  if (options.corpus !== undefined)
    throw new InputError('--corpus is not supported with --loop A (Loop A scores the study corpus)', {
      field: '--corpus',
    });
  if (options.partition !== undefined && !(PARTITIONS as readonly string[]).includes(options.partition)) {
    throw new InputError(`unknown partition "${options.partition}"; expected one of ${PARTITIONS.join(', ')}`, {
      field: '--partition',
    });
  }
  const hasDatabase = await databaseExists(studyDatabaseLocation(path.resolve(studyDir)));
  // Read-only on a read-only study: Loop A's evaluation records no signal and stores nothing.
  const session = await openStudy(studyDir, {
    ...options,
    readonly: !hasDatabase || !isStudyWritable(studyDir),
    modelCalls: 'executor',
  });
  try {
    const study = session.study;
    let artifactText: string;
    let artifactLabel: string;
    if (options.artifact !== undefined) {
      artifactText = readTextFile(path.resolve(options.artifact), 'the artifact file');
      artifactLabel = path.resolve(options.artifact);
    } else {
      const active = hasDatabase ? await getRegistryVersion(session.db) : undefined;
      artifactText = active?.text ?? study.artifactText;
      artifactLabel =
        active !== undefined ? `active version ${active.id}` : `${study.artifactPath} (no study database yet)`;
    }
    const partition = options.partition as PartitionName | undefined;
    const evaluation = await evaluateLoopA({
      study,
      db: session.db,
      artifactText,
      ...(partition !== undefined ? { examples: asIntentExamples(study.partitions[partition]) } : {}),
    });
    const payload = {
      study: study.dir,
      loop: 'A' as const,
      artifact: artifactLabel,
      artifactHash: evaluation.artifactHash,
      partition: partition ?? 'all',
      weights: LOOP_A_WEIGHTS,
      ...summaryJson(evaluation),
      partitions: Object.fromEntries(
        Object.entries(evaluation.partitions).map(([name, summary]) => [name, summaryJson(summary)]),
      ),
      patterns: evaluation.patterns,
      examples: evaluation.results.map(exampleJson),
    };
    // Nothing valid came back: there is no score, and a script must not read this as one (exit 1, as plain eval).
    failWhenNothingValid(
      { total: evaluation.examples, invalid: evaluation.invalid, examples: evaluation.results },
      'intents',
    );
    if (options.json === true) {
      printJson(payload);
      return;
    }
    printEvaluation(artifactLabel, evaluation, options.quiet === true);
  } finally {
    await session.close();
  }
}

function summaryJson(summary: LoopASummary) {
  return {
    composite: summary.composite,
    compileSuccessRate: summary.compileSuccessRate,
    meanGatePassRate: summary.meanGatePassRate,
    allGatesPassedRate: summary.allGatesPassedRate,
    meanConfidence: summary.meanConfidence,
    examples: summary.examples,
    valid: summary.valid,
    invalid: summary.invalid,
    methods: summary.methods,
    gateFailures: summary.gateFailures,
  };
}

function exampleJson(result: LoopAExampleResult) {
  if (!result.valid)
    return {
      id: result.id,
      partition: result.partition,
      valid: false as const,
      invalidReason: result.invalidReason,
      message: result.message,
    };
  return {
    id: result.id,
    partition: result.partition,
    valid: true as const,
    appType: result.intent.appType,
    entityCount: result.intent.entities.length,
    method: result.method,
    confidence: result.confidence,
    patterns: result.patterns,
    uncovered: result.uncovered,
    compiled: result.build.ok,
    gatePassRate: result.gatePassRate,
    allGatesPassed: result.allGatesPassed,
    failedGates: result.failedGates,
    gates: result.gates,
  };
}

function printEvaluation(label: string, evaluation: LoopAEvaluation, quiet: boolean): void {
  print(
    `Loop A (end-to-end) on ${label}: ${evaluation.examples} examples, ${evaluation.invalid} invalid intents (counted, not scored)`,
  );
  const rows = [['partition', 'examples', 'invalid', 'compile', 'gate pass', 'all gates', 'composite', 'confidence']];
  const row = (name: string, summary: LoopASummary): string[] => [
    name,
    String(summary.examples),
    String(summary.invalid),
    formatScore(summary.compileSuccessRate),
    formatScore(summary.meanGatePassRate),
    formatScore(summary.allGatesPassedRate),
    formatScore(summary.composite),
    formatScore(summary.meanConfidence),
  ];
  for (const name of PARTITIONS) {
    const summary = evaluation.partitions[name];
    if (summary !== undefined) rows.push(row(name, summary));
  }
  rows.push(row('all', evaluation));
  print(table(rows));
  print(
    `composite = ${LOOP_A_WEIGHTS.compileSuccess} × compile success rate + ${LOOP_A_WEIGHTS.gatePassRate} × mean gate pass rate + ${LOOP_A_WEIGHTS.allGatesPassed} × all-gates-passed share`,
  );
  print(
    `assembly: direct ${evaluation.methods.direct}, decomposed ${evaluation.methods.decomposed}, partial ${evaluation.methods.partial}`,
  );
  print();
  print('failures per gate:');
  print(table(STRUCTURAL_GATE_NAMES.map((name) => [`  ${name}`, String(evaluation.gateFailures[name])])));
  if (quiet) return;
  print();
  for (const result of evaluation.results) {
    if (!result.valid) {
      print(`${result.id}  INVALID (${result.invalidReason}): ${result.message}`);
      continue;
    }
    const passed = result.gates.length - result.failedGates.length;
    const failed = result.failedGates.length > 0 ? `  failed: ${result.failedGates.join(', ')}` : '';
    print(
      `${result.id}  ${result.method} ${formatScore(result.confidence)}  ${result.build.ok ? 'built' : 'BUILD FAILED'}  gates ${passed}/${result.gates.length}${failed}`,
    );
  }
}

export interface RunLoopAOptions extends ModelOptions {
  json?: boolean;
  quiet?: boolean;
  wait?: boolean;
}

/**
 * `kloop run <study> --loop A`: one Loop A round, in a session of the session
 * runner (src/cli/session/session-runner.ts); what passes goes to the review
 * queue. Ctrl-C stops after the candidate in flight: the Loop A run is
 * recorded as interrupted, its decisions so far kept (exit 130).
 */
export async function runLoopACommand(studyDir: string, options: RunLoopAOptions): Promise<void> {
  refuseNonIntentStudy(studyDir, 'Loop A (run --loop A)');
  const session = await openStudy(studyDir, options);
  const quiet = options.quiet === true;
  const study = session.study;
  const message = 'interrupted: the Loop A run is recorded as interrupted; the decisions it made are kept';
  await runSession(
    {
      quiet,
      json: options.json === true,
      lease: {
        db: session.db,
        studyKey: study.dir,
        location: studyDatabaseLocation(study.dir),
        wait: options.wait === true,
      },
      interruptNotice: 'kloop: interrupted — stopping after the candidate in flight',
      // The candidate in flight is finished, however long it takes (a second Ctrl-C quits at once).
      graceMs: null,
      interruptedReport: () => ({
        message,
        json: { study: study.dir, loop: 'A', interrupted: true, message, usage: session.plugins.usage() },
      }),
      close: () => session.close(),
    },
    async (context) => {
      session.plugins.checkBudget(study);
      progress(
        `kloop: Loop A on ${study.dir} — ${study.corpus.length} examples, executor ${study.executor.id}, proposer ${study.proposer.id}`,
        quiet,
      );
      const outcome = await runLoopA({
        study,
        db: session.db,
        signal: context.signal,
        onEvent: (event) => progress(describeEvent(event), quiet),
      });
      if (options.json === true) printJson({ study: study.dir, loop: 'A', ...outcome, usage: session.plugins.usage() });
      else printRun(outcome);
      return context.interrupted ? EXIT.interrupted : EXIT.ok;
    },
  );
}

function describeEvent(event: LoopAEvent): string {
  switch (event.type) {
    case 'start':
      return `loop A run ${event.runId}: incumbent version ${event.incumbentVersionId}, composite ${formatScore(event.composite)}`;
    case 'proposed':
      return `proposed ${event.artifacts} playbook edits and ${event.patterns} patterns${event.failures > 0 ? ` (${event.failures} proposal failures)` : ''}`;
    case 'decision':
      return `  ${event.decision === 'queued' ? `QUEUED #${event.reviewItemId}` : event.decision === 'skipped' ? 'skipped ' : 'refused '} ${event.decision === 'queued' ? '' : `(${event.reason}) `}${event.kind}: ${event.delta}${event.compositeDelta !== null ? `  [Δ composite ${formatDelta(event.compositeDelta)}]` : ''}`;
  }
}

function printRun(outcome: LoopARunOutcome): void {
  print(
    `Loop A run ${outcome.runId} on version ${outcome.incumbentVersionId}: composite ${formatScore(outcome.incumbent.composite)} (compile ${formatScore(outcome.incumbent.compileSuccessRate)}, gate pass ${formatScore(outcome.incumbent.meanGatePassRate)}, all gates ${formatScore(outcome.incumbent.allGatesPassedRate)})`,
  );
  print(
    `candidates: ${outcome.candidates.length}; sent to review ${outcome.queued}, refused ${outcome.refused}, skipped ${outcome.skipped}`,
  );
  for (const failure of outcome.proposalFailures) print(`proposal failure: ${failure}`);
  for (const candidate of outcome.candidates) {
    const last = candidate.checks.at(-1);
    print(
      `  ${candidate.decision.padEnd(7)} ${candidate.kind.padEnd(8)} ${candidate.delta}${candidate.reviewItemId !== null ? `  → review item ${candidate.reviewItemId}` : ''}${candidate.decision === 'refused' && last !== undefined ? `  (${candidate.reason}: ${last.detail})` : candidate.decision !== 'queued' ? `  (${candidate.reason})` : ''}`,
    );
  }
  if (outcome.queued > 0)
    print(
      'Loop A never activates a change: decide with `kloop review <study>` and `kloop review <study> approve|reject ID --by NAME`.',
    );
}
