/**
 * `kloop run <study>`: run or continue the optimization loop.
 *
 * One writer per study: the run holds the study's lease (src/storage/lease.ts)
 * with a heartbeat; a second run refuses (exit 3) or, with `--wait`, waits.
 * Ctrl-C (or SIGTERM, or a closed output pipe) abandons the evaluations in
 * flight, records the run as `interrupted`, releases the lease and exits 130;
 * the next run continues.
 * See docs/reliability.md.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError, KloopError } from '../../errors.ts';
import { studyDatabaseLocation } from '../../storage/database.ts';
import type { LeaseHeartbeat, LeaseRecord } from '../../storage/lease.ts';
import { acquireLease, readLease, releaseLease, releaseLeaseSync, startLeaseHeartbeat } from '../../storage/lease.ts';
import { LeaseLostError, isLeaseLost } from '../../storage/write-fence.ts';
import type { StudyDatabase } from '../../storage/database.ts';
import type { StudyEvaluatorOptions } from '../../loop/evaluate-partition.ts';
import type { EvaluationQueue } from '../../storage/evaluation-queue.ts';
import { runStudy } from '../../loop/run-study.ts';
import { createStudyEvaluator } from '../../loop/evaluate-partition.ts';
import { buildStudyReport, markCorpus } from '../../report/report.ts';
import { printJson, progress } from '../output.ts';
import type { LoadedStudy } from '../../loop/loaded-study.ts';
import { onOutputClosed } from '../session/closed-output.ts';
import { latestCalibration } from '../../calibration/calibration.ts';
import type { PowerWarning } from '../../calibration/power-check.ts';
import { studyPowerWarnings } from '../../calibration/power-check.ts';
import { getRegistryVersion } from '../../storage/registry.ts';
import { assertProposerFits } from '../../doctor/proposer-fit.ts';
import { describeCorpusStart, startCorpusLifecycle } from '../../loop/corpus-lifecycle.ts';
import { calibrate } from './calibrate.ts';
import { STOP_REASON_MEANINGS, describeComparison, describeEvent, printReport } from './run-report.ts';
import type { ModelOptions } from './study-session.ts';
import { addModelOptions, assertStudyWritable, openStudy } from './study-session.ts';
import { parseLoopOption, runLoopACommand } from './loop-a.ts';
import { gitNotebookEnabled, syncGitNotebook } from './git-notebook.ts';
import { INTERRUPTED_EXIT_CODE, exitCodeOf } from '../../loop/stop-reasons.ts';
import { studyModeOf } from '../../online/config.ts';
import { runOnlineCommand } from './online-run.ts';

/** Exit code of an interrupted run (128 + SIGINT), as shells report it. */
export { INTERRUPTED_EXIT_CODE };
/** After the first Ctrl-C, the run is given this long (milliseconds) to wind down before it is ended anyway. */
export const INTERRUPT_GRACE_MS = 10_000;

/** The exit code of a run that stopped for `stopReason` (the table of src/loop/stop-reasons.ts): 0 done, 1 failed, 130 interrupted. */
export { exitCodeOf };

/** What each stop reason means, the comparison lines and the text report (kept here for their callers). */
export { STOP_REASON_MEANINGS, describeComparison, printReport };

/** Refuses a study folder kloop cannot write (exit 2), before anything is written (kept here for its callers). */
export { assertStudyWritable };

export function registerRunCommand(program: Command): void {
  addModelOptions(
    program
      .command('run')
      .description('Run (or continue) the loop on a study folder until a stopping criterion holds.')
      .argument('<study>', 'study folder (holds kloop.yaml, program.md, the artifact and the corpus)')
      .option('--json', 'print one JSON report object on stdout')
      .option('--quiet', 'no progress lines on stderr')
      .option('--calibrate', 'calibrate the evaluator first (noise, signal, τ) and use it')
      .option('--max-experiments <n>', 'override stopping.maxExperiments (a study total)', parseCount)
      .option(
        '--loop <A|B>',
        'B: the optimization loop with its automatic ratchet (default); A: the end-to-end loop (intent studies only), whose candidates go to the review queue',
      )
      .option('--wait', 'when another run holds the study, wait for it to finish instead of exiting with code 3')
      .option(
        '--git',
        'commit each accepted version to the git notebook in .kloop/notebook (as notebook.git: true in kloop.yaml)',
      )
      .option(
        '--workers',
        "send the evaluations to `kloop worker` processes through the job queue of the study's PostgreSQL database (docs/storage.md)",
      )
      .option('--batch-size <n>', 'with --workers: examples per evaluation job (default 4)', parseBatchSize)
      .option(
        '--simulate',
        'online studies: play the study against its simulated audience on a simulated clock (offline, no key; labelled SIMULATED); docs/online.md',
      )
      .option('--days <n>', 'with --simulate: simulated days of traffic (default 42)', parseCount),
  ).action(
    async (
      studyDir: string,
      options: ModelOptions & {
        json?: boolean;
        calibrate?: boolean;
        maxExperiments?: number;
        wait?: boolean;
        git?: boolean;
        workers?: boolean;
        batchSize?: number;
        simulate?: boolean;
        days?: number;
      },
    ) => {
      // An online study (mode: online) runs one step of its slow loop (src/online/); the rest of this command is the offline loop.
      if (existsSync(path.join(studyDir, 'kloop.yaml')) && studyModeOf(studyDir) === 'online')
        return runOnlineCommand(studyDir, options);
      if (options.simulate === true || options.days !== undefined)
        throw new InputError('--simulate and --days apply to online studies only (mode: online in kloop.yaml)', {
          field: '--simulate',
        });
      const started = Date.now();
      // --no-cache bypasses every store of results: nothing stored before this run is read, and what it measures replaces it.
      const storedResults: StudyEvaluatorOptions =
        options.cache === false ? { readSince: new Date(started).toISOString() } : {};
      if (options.batchSize !== undefined && options.workers !== true)
        throw new InputError(
          '--batch-size sets the size of the jobs of --workers: give --workers too, or leave it out',
          { field: '--batch-size' },
        );
      assertStudyWritable(studyDir);
      if (parseLoopOption((options as { loop?: string }).loop) === 'A') return runLoopACommand(studyDir, options);
      // Opening waits for, and retries, a database locked by another process (src/storage/database.ts): two runs started at once both open it.
      const session = await openStudy(studyDir, options);
      const quiet = options.quiet === true;
      // Before the lease, the baseline or a model call: the proposer can read what it will edit (src/doctor/proposer-fit.ts).
      if (session.study.config !== undefined) {
        try {
          assertProposerFits(
            session.study.config,
            (await getRegistryVersion(session.db))?.text ?? session.study.artifactText,
          );
        } catch (error) {
          await session.close();
          throw error;
        }
      }
      // --workers: what the evaluator has not stored is evaluated by `kloop worker` processes (src/storage/evaluation-queue.ts).
      const queue = options.workers === true ? await openStudyQueue(session, quiet, options.batchSize) : undefined;
      if (queue !== undefined) storedResults.remote = queue;
      const databaseFile = studyDatabaseLocation(session.study.dir);
      const controller = new AbortController();
      let lease: LeaseRecord | undefined;
      let heartbeat: LeaseHeartbeat | undefined;
      let runId: number | undefined;
      let interrupts = 0;
      const onSignal = (): void => {
        interrupts += 1;
        if (interrupts > 1) {
          // Quit at once: give the lease back so the next run need not wait; the run row stays unfinished, like a crash.
          if (lease !== undefined) releaseLeaseSync(databaseFile, lease);
          process.exit(INTERRUPTED_EXIT_CODE);
        }
        progress('kloop: interrupted — abandoning the evaluations in flight (press Ctrl-C again to quit at once)');
        controller.abort(new Error('interrupted'));
        // A bound on winding down: record the interruption, release the lease and end the process anyway.
        setTimeout(() => {
          void windDown().finally(() => process.exit(INTERRUPTED_EXIT_CODE));
        }, INTERRUPT_GRACE_MS).unref();
      };
      const windDown = async (): Promise<void> => {
        progress(`kloop: still busy ${INTERRUPT_GRACE_MS / 1000} s after the interrupt: ending the run now`);
        const work = (async () => {
          await heartbeat?.stop();
          if (runId !== undefined) {
            await session.db
              .updateTable('runs')
              .set({ ended_at: new Date().toISOString(), stop_reason: 'interrupted' })
              .where('id', '=', runId)
              .where('ended_at', 'is', null)
              .execute();
          }
          if (lease !== undefined) await releaseLease(session.db, lease);
        })();
        await Promise.race([work.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
        if (lease !== undefined) releaseLeaseSync(databaseFile, lease);
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      // A closed output pipe (`kloop run … | head`) winds the run down like Ctrl-C.
      const stopWatchingOutput = onOutputClosed(onSignal);
      try {
        const study = session.study;
        try {
          lease = await acquireLease(session.db, {
            studyKey: study.dir,
            wait: options.wait === true,
            signal: controller.signal,
            onWait: (holder) =>
              progress(
                `kloop: study is being run by pid ${holder.pid} on host ${holder.hostname} since ${holder.acquiredAt}; waiting for it to finish (--wait)`,
                quiet,
              ),
            onTakeOver: (previous) =>
              progress(
                `kloop: took over the lease of pid ${previous.pid} on host ${previous.hostname} (since ${previous.acquiredAt}): its process is gone or its heartbeat (${previous.heartbeatAt}) stopped`,
                quiet,
              ),
          });
        } catch (error) {
          if (!controller.signal.aborted) throw error;
          progress('kloop: interrupted while waiting for the study; nothing was run', quiet);
          process.exitCode = INTERRUPTED_EXIT_CODE;
          return;
        }
        let lostTo: LeaseRecord | undefined;
        heartbeat = startLeaseHeartbeat(session.db, lease, {
          file: databaseFile,
          onLost: () => {
            void readLease(session.db, study.dir).then((holder) => {
              lostTo = holder;
              progress(
                `kloop: lost the study lease${holder !== undefined ? ` to pid ${holder.pid} on host ${holder.hostname}` : ''}: stopping`,
              );
              controller.abort(new Error('lease lost'));
            });
          },
          onError: (message) => progress(`kloop: WARNING: lease heartbeat failed: ${message}`, quiet),
        });
        if (options.maxExperiments !== undefined) study.stopping.maxExperiments = options.maxExperiments;
        // A study that requires a calibration and has never had one is refused before its corpus is admitted:
        // bad input changes nothing (the exact check, for the current evaluator, follows the admission).
        if (
          options.calibrate !== true &&
          study.gate.requireCalibration &&
          (await session.db.selectFrom('calibrations').select('id').limit(1).executeTakeFirst()) === undefined
        ) {
          throw requiresCalibration(study);
        }
        // A budget that cannot cover a few proposals is bad input: refused before anything is written.
        session.plugins.checkBudget(study);
        // Before round 1: the corpus files' new records are admitted or refused, visibly (docs/corpus.md).
        for (const line of describeCorpusStart(await startCorpusLifecycle(session.db, study, () => new Date())))
          progress(`kloop: ${line}`, quiet);
        // The partitions this run starts with: the report lists what moved after this point.
        const corpusAtStart = await markCorpus(session.db, study);
        const fingerprint = createStudyEvaluator(study).fingerprint;
        if (options.calibrate === true) {
          let result: Awaited<ReturnType<typeof calibrate>>;
          try {
            result = await calibrate(study, session.db, quiet, storedResults, controller.signal);
          } catch (error) {
            if (!controller.signal.aborted) throw error;
            // Ctrl-C during the calibration that precedes the run: its calls are aborted, and no run was started.
            progress(
              'kloop: interrupted during the calibration; nothing was run (the calibration was not stored)',
              quiet,
            );
            process.exitCode = INTERRUPTED_EXIT_CODE;
            return;
          }
          if (result.ok) progress(`kloop: ${result.message}`, quiet);
          // A failed calibration is a finding about the evaluator, as `kloop calibrate` reports it (exit 1), not bad input.
          if (!result.ok)
            throw new KloopError(result.message, { code: 'calibration', exitCode: 1, studyPath: study.dir });
        }
        const calibration = await latestCalibration(session.db, fingerprint, undefined, study.gate.calibrationWindow);
        if (calibration === undefined && study.gate.requireCalibration) throw requiresCalibration(study);
        // The artifact file seeds a new study only: once the notebook holds a seed, an edit of the file is not read. Say so.
        const seed = await getRegistryVersion(session.db, 'seed');
        if (seed !== undefined && seed.text !== study.artifactText) {
          const active = await getRegistryVersion(session.db);
          progress(
            `kloop: NOTE: ${path.basename(study.artifactPath)} differs from the seed this study started from (version ${seed.id}); the file seeds a new study only, and this run continues from the active version ${active?.id ?? seed.id}. To start afresh from the file: kloop reset ${study.dir}`,
            quiet,
          );
        }
        progress(
          `kloop: ${study.dir} — ${study.corpus.length} examples (optimization ${study.partitions.optimization.length}, anchor ${study.partitions.anchor.length}, shadow ${study.partitions.shadow.length}), executor ${study.executor.id}, proposer ${study.proposer.id}`,
          quiet,
        );
        if (calibration !== undefined)
          progress(
            `kloop: calibration ${calibration.record.createdAt}: noise SD ${calibration.record.noiseSd.toFixed(6)} (rolling max ${calibration.calibration.noiseSd.toFixed(6)}), τ = thresholdK ${study.gate.thresholdK} × ${calibration.calibration.noiseSd.toFixed(6)} = ${(study.gate.thresholdK * calibration.calibration.noiseSd).toFixed(6)}`,
            quiet,
          );
        else if (study.executor.deterministic)
          progress(
            'kloop: deterministic executor, no calibration stored: run-to-run noise is 0, τ = 0; the paired test carries the decision',
            quiet,
          );
        else
          progress(
            'kloop: WARNING: stochastic executor without a calibration: τ = 0 and no per-example tolerance; run `kloop calibrate` first',
            quiet,
          );
        // Before round 1: can any change reach significance on these partitions? (src/calibration/power-check.ts)
        let powerWarnings: PowerWarning[] = [];
        try {
          powerWarnings = await studyPowerWarnings({
            study,
            evaluator: createStudyEvaluator(study, session.db, storedResults),
            incumbentText: (await getRegistryVersion(session.db))?.text ?? study.artifactText,
            db: session.db,
            signal: controller.signal,
          });
        } catch (error) {
          if (controller.signal.aborted) {
            progress('kloop: interrupted before round 1; nothing was run', quiet);
            process.exitCode = INTERRUPTED_EXIT_CODE;
            return;
          }
          // The loop meets the same failure at its first evaluation and stops with its own reason.
          progress(
            `kloop: WARNING: the power check could not evaluate the incumbent (${(error as Error).message}); skipped`,
            quiet,
          );
        }
        for (const warning of powerWarnings) progress(`kloop: WARNING: ${warning.message}`, quiet);
        // The git notebook: a sync from the database after each accepted decision and at the end (idempotent).
        const mirrorConfig = gitNotebookEnabled(study.config, options.git) ? study.config : undefined;
        let mirrorChain: Promise<void> = Promise.resolve();
        const mirror = (): Promise<void> => {
          if (mirrorConfig === undefined) return Promise.resolve();
          mirrorChain = mirrorChain.then(async () => {
            try {
              await syncGitNotebook(session.db, mirrorConfig);
            } catch (error) {
              progress(
                `kloop: WARNING: the git notebook could not be written (${(error as Error).message}); the database is unaffected, \`kloop doctor\` reports the gap and the next run fills it`,
                quiet,
              );
            }
          });
          return mirrorChain;
        };
        await mirror();
        const outcome = await runStudy({
          study,
          db: session.db,
          ...(calibration !== undefined ? { calibration: calibration.calibration } : {}),
          evaluator: storedResults,
          signal: controller.signal,
          onCorpusChange: (change) => progress(`kloop: ${change.message}`, quiet),
          onEvent: (event) => {
            if (event.type === 'start') runId = event.runId;
            progress(describeEvent(event, study.partitions.optimization.length, study.headline), quiet);
            if (event.type === 'decision' && event.decision === 'accepted') void mirror();
          },
        });
        await mirror();
        if (
          lostTo !== undefined ||
          (controller.signal.reason instanceof Error && controller.signal.reason.message === 'lease lost')
        ) {
          throw await leaseLostReport(session.db, lease, study.dir, runId);
        }
        const report = await buildStudyReport(
          session.db,
          study,
          createStudyEvaluator(study, session.db, storedResults),
          {
            runId: outcome.runId,
            stopReason: outcome.stopReason,
            stopDetail: outcome.stopDetail,
            wallTimeMs: Date.now() - started,
            corpusAtStart,
          },
          { signal: controller.signal },
        );
        const usage = session.plugins.usage();
        // Ctrl-C while the report evaluated (after a stop on a criterion): the report is printed, and the exit says interrupted.
        const interruptedReport = report.notEvaluated?.some((entry) => entry.reason === 'interrupted') === true;
        const exitCode = interruptedReport ? INTERRUPTED_EXIT_CODE : exitCodeOf(outcome.stopReason);
        const withUsage = {
          ...report,
          stopMeaning: STOP_REASON_MEANINGS[outcome.stopReason] ?? outcome.stopReason,
          usage,
          exitCode,
          powerWarnings,
        };
        // The run's usage meter (executor and proposer) joins its stored report: the viewer's budget reads it.
        await session.db
          .updateTable('runs')
          .set({ report: JSON.stringify({ ...report, usage, powerWarnings }) })
          .where('id', '=', outcome.runId)
          .execute();
        if (options.json === true) printJson(withUsage);
        else printReport(report);
        process.exitCode = exitCode;
      } catch (error) {
        // A write refused by the fence (src/storage/write-fence.ts), wherever the run was: one report, one exit code.
        if (isLeaseLost(error) && lease !== undefined)
          throw await leaseLostReport(session.db, lease, session.study.dir, runId);
        throw error;
      } finally {
        await heartbeat?.stop();
        if (lease !== undefined)
          await releaseLease(session.db, lease).catch(() => releaseLeaseSync(databaseFile, lease!));
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        stopWatchingOutput();
        await queue?.close();
        await session.close();
      }
    },
  );
}

/**
 * The report of a run whose lease was taken over: who holds the study now,
 * and what this run wrote before its writes were refused (read-only: the
 * fence refuses every write). Exit code 5, code `lease_lost`.
 */
async function leaseLostReport(
  db: StudyDatabase,
  lease: LeaseRecord,
  studyPath: string,
  runId: number | undefined,
): Promise<LeaseLostError> {
  const holder = await readLease(db, studyPath).catch(() => undefined);
  const decided =
    runId === undefined
      ? 0
      : Number(
          (
            await db
              .selectFrom('experiments')
              .select((eb) => eb.fn.countAll<number>().as('count'))
              .where('run_id', '=', runId)
              .executeTakeFirst()
              .catch(() => undefined)
          )?.count ?? 0,
        );
  const taker =
    holder !== undefined && holder.ownerId !== lease.ownerId
      ? `pid ${holder.pid} on host ${holder.hostname} took it over at ${holder.acquiredAt} (lease generation ${lease.generation} → ${holder.generation})`
      : `another process took it over (lease generation ${lease.generation} → ${lease.generation + 1}) and has released it since`;
  const fence = { studyKey: lease.studyKey, ownerId: lease.ownerId, generation: lease.generation };
  return new LeaseLostError(
    fence,
    `this run lost the study's lease while it looked dead (paused, or its heartbeat could not reach the database): ${taker}. Its writes were refused from the take-over on (fencing), so nothing was written after it; this run${runId !== undefined ? ` (#${runId})` : ''} recorded ${decided} experiment(s) before. The process holding the lease continues the study; \`kloop status\` shows where it stands`,
  );
}

function parseBatchSize(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new InputError(`expected a whole number ≥ 1, got "${value}"`, { field: '--batch-size' });
  return parsed;
}

/** The coordinator's side of the study's job queue, with its progress lines. */
async function openStudyQueue(
  session: { study: { dir: string }; db: import('../../storage/database.ts').StudyDatabase; close(): Promise<void> },
  quiet: boolean,
  batchSize: number | undefined,
): Promise<EvaluationQueue> {
  const { openEvaluationQueue } = await import('../../storage/evaluation-queue.ts');
  try {
    return await openEvaluationQueue(studyDatabaseLocation(session.study.dir), session.db, {
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
  } catch (error) {
    await session.close();
    throw error;
  }
}

function parseCount(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new InputError(`expected a whole number ≥ 0, got "${value}"`, { field: '--max-experiments' });
  return parsed;
}

/** The refusal of a run that needs a calibration for its evaluator and has none (gate.requireCalibration). */
function requiresCalibration(study: LoadedStudy): InputError {
  return new InputError(
    'this study requires a valid calibration for the current evaluator (gate.requireCalibration): run `kloop calibrate` first, or `kloop run --calibrate`',
    {
      file: study.config?.configPath ?? study.dir,
      field: 'gate.requireCalibration',
    },
  );
}
