/** `kloop history <study>` and `kloop show <study> <experiment>`: the lab notebook, read-only. */
import { studyModeOf } from '../../online/config.ts';
import { showOnlineExperiment } from './online-show.ts';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { INVALID_INCUMBENT } from '../../doctor/proposer-fit.ts';
import { InputError } from '../../errors.ts';
import type { StudyDatabase } from '../../storage/study-database.ts';
import { databaseExists, openDatabase, studyDatabaseLocation } from '../../storage/database.ts';
import { listRegistryEvents } from '../../storage/activation.ts';
import { loadExperimentScores } from '../../view/experiment-scores.ts';
import { hasTable, openExampleResults } from '../../view/stored-results.ts';
import type { FlakyExamples } from '../../evaluator/flaky-examples.ts';
import { FLAKY_RANGE, describeFlakyExamples, findFlakyExamples } from '../../evaluator/flaky-examples.ts';
import { getVersion } from '../../storage/registry.ts';
import { formatDelta, formatScore, print, printJson, table } from '../output.ts';
import { exitCodeOf } from '../../loop/stop-reasons.ts';
import { duplicateOf } from '../../loop/duplicate-of.ts';
import type { StoredExperiment, StoredProposalFailure } from '../../storage/notebook/history-queries.ts';
import { listProposalFailures, listRunStops, readExperiment } from '../../storage/notebook/history-queries.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

async function openExisting(studyDir: string): Promise<StudyDatabase> {
  if (!existsSync(studyDir)) throw new InputError('the study folder does not exist', { file: studyDir });
  const file = studyDatabaseLocation(path.resolve(studyDir));
  if (!(await databaseExists(file)))
    throw new InputError('this study has no database yet: run `kloop run` first', { file });
  return openDatabase(file, { readonly: true });
}

export function registerHistoryCommands(program: Command): void {
  program
    .command('history')
    .description(
      'List every experiment of a study: round, decision, reason, composite, Δ, p-value and delta; then the failed proposer answers, the runs that stopped on a problem (with why), and the moves of the active version (who activated what).',
    )
    .argument('<study>', 'study folder')
    .option('--json', 'print one JSON object on stdout')
    .action(historyCommand);

  program
    .command('show')
    .description('Show one experiment: its delta, decision and the evidence of every gate check.')
    .argument('<study>', 'study folder')
    .argument('<experiment>', 'experiment id, or P<id> for a failed proposer answer (see `kloop history`)')
    .option('--json', 'print one JSON object on stdout')
    .option(
      '--simulated',
      'online studies: show the experiment of the last `kloop run --simulate` (.kloop/simulated.db)',
    )
    .action(showCommand);
}

/**
 * The flaky examples of an experiment (src/evaluator/flaky-examples.ts): of
 * the candidate, over the repeats of its evaluation, and of the incumbent it
 * was judged against, over every repeat stored under the experiment's
 * evaluator fingerprint (its top-ups included). From the stored results;
 * none for a candidate skipped before evaluation.
 */
async function flakyOfExperiment(
  db: StudyDatabase,
  fingerprint: string,
  candidateHash: string,
  baseVersionId: number,
): Promise<{ level: number; candidate: FlakyExamples; incumbent: FlakyExamples }> {
  const store = await openExampleResults(db);
  const read = async (hash: string | undefined): Promise<FlakyExamples> => {
    if (hash === undefined) return findFlakyExamples([]);
    const outcomes = await store.outcomes(fingerprint, hash);
    return findFlakyExamples(
      [...outcomes].flatMap(([exampleId, repeats]) =>
        repeats.map((outcome) => ({
          exampleId,
          repeat: outcome.repeat,
          valid: outcome.valid,
          composite: outcome.composite,
        })),
      ),
    );
  };
  const base = await getVersion(db, baseVersionId);
  return { level: FLAKY_RANGE, candidate: await read(candidateHash), incumbent: await read(base?.hash) };
}

/** A run's stop, as `history` lists it: the reason, its exit code and the detail stored with it (null for a run still open, or one stored without it). */
interface RunStop {
  id: number;
  startedAt: string;
  endedAt: string | null;
  stopReason: string | null;
  exitCode: number | null;
  stopDetail: string | null;
}

async function runStops(db: StudyDatabase): Promise<RunStop[]> {
  return (await listRunStops(db)).map((run) => ({
    id: run.id,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    stopReason: run.stopReason,
    exitCode: run.stopReason === null ? null : exitCodeOf(run.stopReason),
    stopDetail: run.stopDetail,
  }));
}

/** The failed proposer answers (only answer `id` when given), as `history` and `show` print them. */
async function failedProposals(db: StudyDatabase, id?: number): Promise<StoredProposalFailure[]> {
  // A notebook written before proposer calls were recorded, opened read-only (not migrated), has none.
  if (!(await hasTable(db, 'proposals'))) return [];
  return listProposalFailures(db, id);
}

async function showProposalFailure(studyDir: string, id: number, json: boolean): Promise<void> {
  const db = await openExisting(studyDir);
  try {
    const [failure] = await failedProposals(db, id);
    if (failure === undefined)
      throw new InputError(`no failed proposer answer P${id} in this study`, { field: '<experiment>' });
    if (json) {
      printJson(failure);
      return;
    }
    print(
      `failed proposer answer P${failure.id} (run ${failure.run}, round ${failure.round}, attempt ${failure.attempt}, proposer ${failure.proposer})`,
    );
    print(`reason: ${failure.code} — ${failure.reason}`);
    print(`tokens: ${failure.inputTokens} in, ${failure.outputTokens} out; cost ${failure.costUsd.toFixed(6)} USD`);
    print('raw answer (capped):');
    print(failure.raw ?? '(none: the call itself failed)');
  } finally {
    await db.destroy();
  }
}

/** `kloop history`'s action: every experiment, the failed proposer answers, the runs that stopped on a problem and the moves of the active version. */
async function historyCommand(studyDir: string, options: { json?: boolean }): Promise<void> {
  const db = await openExisting(studyDir);
  try {
    const notebook: HistoryRecords = {
      scores: await loadExperimentScores(db),
      events: await listRegistryEvents(db, 'active'),
      failures: await failedProposals(db),
      runs: await runStops(db),
    };
    if (options.json === true) printHistoryJson(notebook);
    else printHistory(notebook);
  } finally {
    await db.destroy();
  }
}

/** What `kloop history` lists. */
interface HistoryRecords {
  scores: Awaited<ReturnType<typeof loadExperimentScores>>;
  events: Awaited<ReturnType<typeof listRegistryEvents>>;
  failures: StoredProposalFailure[];
  runs: RunStop[];
}

/** `kloop history --json`: one object with the experiments, the registry's moves, the failed proposer answers and the runs. */
function printHistoryJson({ scores, events, failures, runs }: HistoryRecords): void {
  printJson({
    experiments: scores.map((score) => ({
      id: score.id,
      run: score.run,
      round: score.round,
      decision: score.decision,
      reason: score.reason,
      delta: score.delta,
      proposer: score.proposer,
      acceptedVersion: score.acceptedVersion,
      createdAt: score.createdAt,
      baseVersion: score.baseVersion,
      composite: score.composite,
      incumbentComposite: score.incumbentComposite,
      compositeDelta: score.compositeDelta,
      pValue: score.pValue,
      welchPValue: score.welchPValue,
      scores: {
        candidate: score.candidate,
        incumbentBefore: score.incumbentBefore,
        incumbentAfter: score.incumbentAfter,
      },
      usage: score.usage,
      repeats: { candidate: score.repeats, incumbent: score.incumbentRepeats },
      scoreSource: score.scoreSource,
    })),
    registryEvents: events.map((event) => ({
      id: event.id,
      version: event.versionId,
      reason: event.reason,
      actor: event.actor,
      createdAt: event.createdAt,
    })),
    proposalFailures: failures,
    runs,
  });
}

/** `kloop history`'s tables: the experiments, the failed proposer answers, the runs that stopped on a problem, the moves of the active version. */
function printHistory({ scores, events, failures, runs }: HistoryRecords): void {
  if (scores.length === 0) print('no experiments yet');
  else {
    print(
      table([
        ['id', 'round', 'decision', 'reason', 'composite', 'Δ', 'p', 'delta'],
        ...scores.map((score) => [
          String(score.id),
          String(score.round),
          score.decision,
          score.reason,
          formatScore(score.composite),
          score.compositeDelta === null ? '—' : formatDelta(score.compositeDelta),
          score.pValue === null ? '—' : score.pValue.toFixed(4),
          score.delta,
        ]),
      ]),
    );
  }
  if (failures.length > 0) {
    print();
    print(
      `failed proposer answers (retried with a fresh sample, but for ${INVALID_INCUMBENT}: the proposer cannot read the incumbent artifact, not retried; \`kloop show <study> P<id>\` prints one with its raw answer):`,
    );
    print(
      table([
        ['id', 'run', 'round', 'attempt', 'reason', 'tokens', 'detail'],
        ...failures.map((failure) => [
          `P${failure.id}`,
          String(failure.run),
          String(failure.round),
          String(failure.attempt),
          failure.code,
          String(failure.inputTokens + failure.outputTokens),
          failure.reason,
        ]),
      ]),
    );
  }
  const failedRuns = runs.filter((run) => run.exitCode === 1);
  if (failedRuns.length > 0) {
    print();
    print('runs that stopped on a problem (exit 1):');
    print(
      table([
        ['run', 'ended', 'stop reason', 'detail'],
        ...failedRuns.map((run) => [String(run.id), run.endedAt ?? '—', run.stopReason ?? '—', run.stopDetail ?? '—']),
      ]),
    );
  }
  if (events.length > 0) {
    print();
    print('moves of the active version:');
    print(
      table([
        ['when', 'version', 'what', 'by'],
        ...events.map((event) => [event.createdAt, `v${event.versionId}`, event.reason, event.actor ?? '—']),
      ]),
    );
  }
}

/** `kloop show`'s action: one experiment with the evidence of every gate check, a failed proposer answer (P<id>), or an online study's experiment. */
async function showCommand(
  studyDir: string,
  experiment: string,
  options: { json?: boolean; simulated?: boolean },
): Promise<void> {
  // An online study's experiments are online experiments with the online gate's checks (src/cli/commands/online-show.ts).
  if (existsSync(path.join(studyDir, 'kloop.yaml')) && studyModeOf(studyDir) === 'online')
    return showOnlineExperiment(studyDir, experiment, options);
  if (options.simulated === true)
    throw new InputError('--simulated applies to online studies only (mode: online)', { field: '--simulated' });
  if (/^P\d+$/i.test(experiment))
    return showProposalFailure(studyDir, Number(experiment.slice(1)), options.json === true);
  const id = Number(experiment);
  if (!Number.isInteger(id) || id < 1)
    throw new InputError(`experiment id must be a positive whole number, got "${experiment}"`, {
      field: '<experiment>',
    });
  const db = await openExisting(studyDir);
  try {
    const row = await readExperiment(db, id);
    if (row === undefined) throw new InputError(`no experiment ${id} in this study`, { field: '<experiment>' });
    const evidence = JSON.parse(row.evidence) as ShownEvidence;
    const flaky = await flakyOfExperiment(db, row.fingerprint, row.candidateHash, row.baseVersionId);
    const duplicate = await duplicateOf(openNotebook(db), row.id);
    const shown: ShownExperiment = { row, evidence, flaky, duplicate };
    if (options.json === true) printJson(experimentJson(shown));
    else printExperiment(shown, studyDir);
  } finally {
    await db.destroy();
  }
}

/** The gate's evidence of an experiment, as `kloop show` reads it. */
interface ShownEvidence {
  checks: Array<{ name: string; passed: boolean; statistic: number | null; threshold: number | null; detail: string }>;
  shadowConsulted: boolean;
  retrial?: { trial: number; of: number; earlier: number[]; alpha: number; shadowAlpha: number };
}

/** What `kloop show` prints of one experiment. */
interface ShownExperiment {
  row: StoredExperiment;
  evidence: ShownEvidence;
  flaky: Awaited<ReturnType<typeof flakyOfExperiment>>;
  duplicate: Awaited<ReturnType<typeof duplicateOf>>;
}

/** `kloop show --json`: the experiment, its checks, flaky examples and the experiment it duplicates. */
function experimentJson({ row, evidence, flaky, duplicate }: ShownExperiment): object {
  return {
    id: row.id,
    run: row.runId,
    round: row.round,
    proposer: row.proposer,
    baseVersion: row.baseVersionId,
    candidateHash: row.candidateHash,
    delta: row.delta,
    rationale: row.rationale,
    decision: row.decision,
    reason: row.reason,
    acceptedVersion: row.acceptedVersionId,
    fingerprint: row.fingerprint,
    seed: row.seed,
    createdAt: row.createdAt,
    checks: evidence.checks,
    shadowConsulted: evidence.shadowConsulted,
    ...(evidence.retrial !== undefined ? { retrial: evidence.retrial } : {}),
    flaky,
    ...(duplicate !== null ? { duplicateOf: duplicate } : {}),
  };
}

/** `kloop show`'s text: the experiment, its decision, the duplicate and re-trial lines, the checks' table, flaky examples. */
function printExperiment({ row, evidence, flaky, duplicate }: ShownExperiment, studyDir: string): void {
  print(
    `experiment ${row.id} (run ${row.runId}, round ${row.round}, proposer ${row.proposer}, base version ${row.baseVersionId})`,
  );
  print(`delta: ${row.delta}`);
  print(`rationale: ${row.rationale}`);
  print(
    `decision: ${row.decision}${row.decision === 'accepted' ? ` → version ${row.acceptedVersionId}` : ` (${row.reason})`}`,
  );
  if (duplicate !== null) {
    print(
      `duplicate of: experiment ${duplicate.experimentId} (${duplicate.sameContent ? 'the same artifact' : `its delta at bigram Jaccard distance ${duplicate.distance.toFixed(3)}`}): kloop show ${studyDir} ${duplicate.experimentId}`,
    );
  }
  if (evidence.retrial !== undefined) {
    const retrial = evidence.retrial;
    print(
      `re-trial: trial ${retrial.trial} of at most ${retrial.of} of this delta (earlier: ${retrial.earlier.map((earlier) => `#${earlier}`).join(', ')}), judged at α = ${retrial.alpha}, shadowAlpha = ${retrial.shadowAlpha} (src/loop/retrials.ts)`,
    );
  }
  print();
  print(
    table([
      ['check', 'verdict', 'statistic', 'threshold', 'detail'],
      ...evidence.checks.map((check) => [
        check.name,
        check.passed ? 'pass' : 'FAIL',
        check.statistic === null ? '—' : String(check.statistic),
        check.threshold === null ? '—' : String(check.threshold),
        check.detail,
      ]),
    ]),
  );
  for (const [who, found] of [
    ['candidate', flaky.candidate],
    [`incumbent (version ${row.baseVersionId})`, flaky.incumbent],
  ] as const) {
    const line = describeFlakyExamples(found);
    if (line !== null) print(`${who}: ${line}`);
  }
}
