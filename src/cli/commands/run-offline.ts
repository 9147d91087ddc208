/**
 * `kloop run <study>` on an offline study (Loop B): the study opened, its
 * session run by the session runner (src/cli/session/session-runner.ts: the
 * lease and its heartbeat, Ctrl-C, SIGTERM and a closed output pipe, the
 * lease-lost report), then the phases of the run: before round 1
 * (./run-start.ts), the loop (src/loop/run-study.ts), and the report.
 *
 * Ctrl-C abandons the evaluations in flight; the loop records the run as
 * `interrupted` and the report says what could not be evaluated (exit 130).
 */
import type { StudyEvaluatorOptions } from '../../loop/evaluate-partition.ts';
import { createStudyEvaluator } from '../../loop/evaluate-partition.ts';
import type { RunOutcome } from '../../loop/run-study.ts';
import { runStudy } from '../../loop/run-study.ts';
import { INTERRUPTED_EXIT_CODE, exitCodeOf } from '../../loop/stop-reasons.ts';
import { buildStudyReport } from '../../report/report.ts';
import { assertProposerFits } from '../../doctor/proposer-fit.ts';
import { studyDatabaseLocation } from '../../storage/database.ts';
import type { EvaluationQueue } from '../../storage/evaluation-queue.ts';
import { countRunExperiments, markRunInterrupted, storeRunReport } from '../../storage/notebook/run-queries.ts';
import { getRegistryVersion } from '../../storage/registry.ts';
import { printJson, progress } from '../output.ts';
import type { SessionContext } from '../session/session-runner.ts';
import { runSession } from '../session/session-runner.ts';
import { createNotebookMirror } from './git-notebook.ts';
import { STOP_REASON_MEANINGS, describeEvent, printReport } from './run-report.ts';
import type { OfflineRunOptions, RunContext, RunStart } from './run-start.ts';
import { startRun } from './run-start.ts';
import type { StudySession } from './study-session.ts';
import { openStudy } from './study-session.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

/** Runs Loop B on the study in `studyDir` until a stopping criterion holds; sets `process.exitCode`. */
export async function runOfflineCommand(studyDir: string, options: OfflineRunOptions): Promise<void> {
  const started = Date.now();
  // --no-cache bypasses every store of results: nothing stored before this run is read, and what it measures replaces it.
  const storedResults: StudyEvaluatorOptions =
    options.cache === false ? { readSince: new Date(started).toISOString() } : {};
  // Opening waits for, and retries, a database locked by another process (src/storage/database.ts): two runs started at once both open it.
  const session = await openStudy(studyDir, options);
  const quiet = options.quiet === true;
  const run: RunContext = { session, options, quiet, storedResults, started, runId: undefined };
  let queue: EvaluationQueue | undefined;
  try {
    // Before the lease, the baseline or a model call: the proposer can read what it will edit (src/doctor/proposer-fit.ts).
    if (session.study.config !== undefined)
      assertProposerFits(
        session.study.config,
        (await getRegistryVersion(session.db))?.text ?? session.study.artifactText,
      );
    // --workers: what the evaluator has not stored is evaluated by `kloop worker` processes (src/storage/evaluation-queue.ts).
    queue = options.workers === true ? await openStudyQueue(session, quiet, options.batchSize) : undefined;
  } catch (error) {
    await session.close();
    throw error;
  }
  if (queue !== undefined) storedResults.remote = queue;
  await runSession(
    {
      quiet,
      json: options.json === true,
      lease: {
        db: session.db,
        studyKey: session.study.dir,
        location: studyDatabaseLocation(session.study.dir),
        wait: options.wait === true,
      },
      interruptNotice: 'kloop: interrupted — abandoning the evaluations in flight (press Ctrl-C again to quit at once)',
      onGraceExpired: async () => {
        if (run.runId !== undefined) await markRunInterrupted(session.db, run.runId);
      },
      describeWritten: async () =>
        `this run${run.runId !== undefined ? ` (#${run.runId})` : ''} recorded ${run.runId === undefined ? 0 : await countRunExperiments(session.db, run.runId)} experiment(s) before`,
      close: async () => {
        await queue?.close();
        await session.close();
      },
    },
    (context) => runLoopB(run, context),
  );
}

/** The session's body: before round 1, the loop, the report; returns the exit code. */
async function runLoopB(run: RunContext, context: SessionContext): Promise<number> {
  const start = await startRun(run, context.signal);
  if (typeof start === 'number') return start;
  const study = run.session.study;
  // The git notebook: a sync from the database after each accepted decision and at the end (idempotent).
  const mirror = createNotebookMirror(run.session.db, study.config, run.options.git, run.quiet);
  await mirror.sync();
  const outcome = await runStudy({
    study,
    notebook: openNotebook(run.session.db),
    ...(start.calibration !== undefined ? { calibration: start.calibration.calibration } : {}),
    evaluator: run.storedResults,
    signal: context.signal,
    onCorpusChange: (change) => progress(`kloop: ${change.message}`, run.quiet),
    onEvent: (event) => {
      if (event.type === 'start') run.runId = event.runId;
      progress(describeEvent(event, study.partitions.optimization.length, study.headline), run.quiet);
      if (event.type === 'decision' && event.decision === 'accepted') void mirror.sync();
    },
  });
  await mirror.sync();
  // The lease was taken over while the loop ran: the session runner reports it (exit 5).
  if (context.leaseLost) throw new Error('lease lost');
  return reportRun(run, context, outcome, start);
}

/** The report of a run that stopped: built, stored with the run's usage, printed; returns the exit code. */
async function reportRun(
  run: RunContext,
  context: SessionContext,
  outcome: RunOutcome,
  start: RunStart,
): Promise<number> {
  const { session } = run;
  const report = await buildStudyReport(
    session.db,
    session.study,
    createStudyEvaluator(session.study, openNotebook(session.db), run.storedResults),
    {
      runId: outcome.runId,
      stopReason: outcome.stopReason,
      stopDetail: outcome.stopDetail,
      wallTimeMs: Date.now() - run.started,
      corpusAtStart: start.corpusAtStart,
    },
    { signal: context.signal },
  );
  const usage = session.plugins.usage();
  const powerWarnings = start.powerWarnings;
  // Ctrl-C while the report evaluated (after a stop on a criterion): the report is printed, and the exit says interrupted.
  const interruptedReport = report.notEvaluated?.some((entry) => entry.reason === 'interrupted') === true;
  const exitCode = interruptedReport ? INTERRUPTED_EXIT_CODE : exitCodeOf(outcome.stopReason);
  // The run's usage meter (executor and proposer) joins its stored report: the viewer's budget reads it.
  await storeRunReport(session.db, outcome.runId, { ...report, usage, powerWarnings });
  if (run.options.json === true)
    printJson({
      ...report,
      stopMeaning: STOP_REASON_MEANINGS[outcome.stopReason] ?? outcome.stopReason,
      usage,
      exitCode,
      powerWarnings,
    });
  else printReport(report);
  return exitCode;
}

/** The coordinator's side of the study's job queue, with its progress lines. */
async function openStudyQueue(
  session: StudySession,
  quiet: boolean,
  batchSize: number | undefined,
): Promise<EvaluationQueue> {
  const { openEvaluationQueue } = await import('../../storage/evaluation-queue.ts');
  return openEvaluationQueue(studyDatabaseLocation(session.study.dir), session.db, {
    ...(batchSize !== undefined ? { batchSize } : {}),
    onWaiting: (status) =>
      progress(
        `kloop: waiting for evaluation workers: ${status.queued} job(s) queued, ${status.running} running, ${status.workers} worker process(es) seen; start \`kloop worker ${session.study.dir} --db …\` (with the same corpus and executor)`,
        quiet,
      ),
    onUnlocked: (workers) =>
      progress(
        `kloop: ${workers.length} evaluation worker(s) gone (${workers.map((worker) => worker.reason).join('; ')}): their jobs go to another worker`,
        quiet,
      ),
    log: (message) => progress(`kloop: ${message}`, quiet),
  });
}
