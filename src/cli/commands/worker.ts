/**
 * `kloop worker [study] --db <url>`: an evaluation worker. Takes the study's
 * evaluation jobs from the job queue in its PostgreSQL database (enqueued by
 * `kloop run --workers`), runs the executor on each job's examples and
 * writes the results to the notebook. Any number of workers, on this machine
 * or others (each with a copy of the study folder: its corpus, artifact and
 * executor settings), serve one coordinator; a worker only takes jobs of the
 * evaluator it has (same corpus, task, weights and executor).
 * See src/storage/evaluation-queue.ts and docs/storage.md.
 */
import type { Command } from 'commander';
import { contentHash } from '../../artifact/content-hash.ts';
import type { Example } from '../../corpus/example.ts';
import { InputError } from '../../errors.ts';
import type { Evaluator } from '../../evaluator/evaluator.ts';
import { describeLocation, studyDatabaseLocation } from '../../storage/database.ts';
import type { EvaluationJob } from '../../storage/evaluation-queue.ts';
import { startEvaluationWorker } from '../../storage/evaluation-worker.ts';
import { isPostgresUrl } from '../../storage/location.ts';
import { withArtifactOverride } from '../../storage/registry.ts';
import { createStudyEvaluator } from '../../loop/evaluate-partition.ts';
import { scratchKey } from '../../loop/scratch-evaluator.ts';
import { printJson, progress } from '../output.ts';
import { EXIT } from '../session/exit-codes.ts';
import type { SessionContext } from '../session/session-runner.ts';
import { runSession } from '../session/session-runner.ts';
import type { ModelOptions, StudySession } from './study-session.ts';
import { addModelOptions, openStudy } from './study-session.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

function parseConcurrency(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new InputError(`expected a whole number ≥ 1, got "${value}"`, { field: '--concurrency' });
  return parsed;
}

/** Runs one job: its examples through the study's evaluator (which stores each result); a transient failure fails the job, so it is retried. */
export async function runEvaluationJob(
  job: EvaluationJob,
  evaluatorOf: (readSince: string | undefined, storedAs?: string) => Evaluator,
  examplesById: ReadonlyMap<string, Example>,
  signal?: AbortSignal,
): Promise<{ executed: number }> {
  // The only other key a job may store under: the screening's scratch key of this evaluator.
  if (job.storedAs !== undefined && job.storedAs !== scratchKey(job.fingerprint))
    throw new Error(`this job stores its results under "${job.storedAs}", not a key of evaluator ${job.fingerprint}`);
  const evaluator = evaluatorOf(job.readSince, job.storedAs);
  if (job.fingerprint !== evaluator.fingerprint)
    throw new Error(`this job is for evaluator ${job.fingerprint}, this worker has ${evaluator.fingerprint}`);
  if (contentHash(job.artifactText) !== job.artifactHash)
    throw new Error("the job's artifact text does not match its hash");
  const examples = job.exampleIds.map((id) => {
    const example = examplesById.get(id);
    if (example === undefined) throw new Error(`example ${id} is not in this worker's corpus`);
    return example;
  });
  const score = await withArtifactOverride(job.artifactText, () =>
    evaluator.evaluate({
      artifactText: job.artifactText,
      partition: job.partition,
      examples,
      repeats: 1,
      firstRepeat: job.repeat,
      ...(signal !== undefined ? { signal } : {}),
    }),
  );
  if (score.transient > 0) {
    const first = score.examples.find((record) => !record.valid && record.transient === true);
    throw new Error(
      `${score.transient} of ${examples.length} result(s) failed transiently (stored: the others)${first !== undefined && !first.valid ? `: ${first.message}` : ''}`,
    );
  }
  return { executed: examples.length };
}

export function registerWorkerCommand(program: Command): void {
  addModelOptions(
    program
      .command('worker')
      .description(
        "Take a study's evaluation jobs from the job queue in its PostgreSQL database (enqueued by kloop run --workers), run the executor and write the results; on this machine or others. Stop with Ctrl-C or SIGTERM: running jobs finish first; a killed worker's jobs go to another worker.",
      )
      .argument('[study]', 'study folder (its corpus, artifact and executor settings; default the current folder)', '.')
      .option('--db <url>', "the study's PostgreSQL database (default: kloop.yaml's storage)")
      .option('--concurrency <n>', 'jobs at once (default 2)', parseConcurrency)
      .option('--quiet', 'no progress lines on stderr')
      .option(
        '--json',
        'when the worker stops, print one JSON object on stdout: study, evaluator, jobs done and failed, results executed',
      ),
  ).action(workerCommand);
}

/** Options of `kloop worker`. */
interface WorkerOptions extends ModelOptions {
  concurrency?: number;
  quiet?: boolean;
  json?: boolean;
}

/**
 * `kloop worker`'s action, a session of the session runner
 * (src/cli/session/session-runner.ts): serves jobs until Ctrl-C, SIGTERM or
 * a closed output, then lets the running jobs finish (a second interrupt
 * quits at once: their jobs go to another worker); exit 130 then.
 */
async function workerCommand(studyDir: string, options: WorkerOptions): Promise<void> {
  const quiet = options.quiet === true;
  if (!isPostgresUrl(studyDatabaseLocation(studyDir))) {
    throw new InputError(
      "kloop worker needs the study's notebook in PostgreSQL: pass --db postgres://… or set storage: in kloop.yaml (see docs/storage.md)",
      { field: '--db', code: 'input.storage' },
    );
  }
  const session = await openStudy(studyDir, options);
  await runSession(
    {
      quiet,
      interruptNotice:
        'kloop worker: stopping once the running jobs are done (Ctrl-C again to quit at once; their jobs then go to another worker)',
      quietNotice: true,
      graceMs: null,
      close: () => session.close(),
    },
    (context) => serveJobs(session, options, context),
  );
}

/** The evaluator of each (readSince, storedAs) a job asks for: `--no-cache` runs and the proposer's screening (stored under a scratch key). */
function createEvaluatorCache(
  study: StudySession['study'],
  db: StudySession['db'],
): { base: Evaluator; evaluatorOf: (readSince: string | undefined, storedAs?: string) => Evaluator } {
  const base = createStudyEvaluator(study, openNotebook(db));
  const byKey = new Map<string, Evaluator>();
  const evaluatorOf = (readSince: string | undefined, storedAs?: string): Evaluator => {
    if (readSince === undefined && storedAs === undefined) return base;
    const key = `${readSince ?? ''}\u0000${storedAs ?? ''}`;
    let evaluator = byKey.get(key);
    if (evaluator === undefined)
      byKey.set(
        key,
        (evaluator = createStudyEvaluator(study, openNotebook(db), {
          ...(readSince !== undefined ? { readSince } : {}),
          ...(storedAs !== undefined ? { storedAs } : {}),
        })),
      );
    return evaluator;
  };
  return { base, evaluatorOf };
}

/** The worker's session: takes jobs until asked to stop, then prints what it did (`--json`); returns the exit code. */
async function serveJobs(session: StudySession, options: WorkerOptions, context: SessionContext): Promise<number> {
  const quiet = options.quiet === true;
  const { study, db } = session;
  const location = studyDatabaseLocation(study.dir);
  const { base, evaluatorOf } = createEvaluatorCache(study, db);
  const examplesById = new Map(study.corpus.map((example) => [example.id, example]));
  const concurrency = options.concurrency ?? 2;
  const tally = { done: 0, failed: 0, results: 0 };
  const worker = await startEvaluationWorker({
    location,
    db,
    fingerprint: base.fingerprint,
    concurrency,
    run: async (job, signal) => void (await runEvaluationJob(job, evaluatorOf, examplesById, signal)),
    onJob: (event) => {
      if (event.type === 'done') tally.done += 1;
      if (event.type === 'failed') tally.failed += 1;
      if (event.type === 'done') tally.results += event.job.exampleIds.length;
      if (event.type === 'done')
        progress(
          `kloop worker: ${event.job.partition} repeat ${event.job.repeat}, ${event.job.exampleIds.length} example(s) of artifact ${event.job.artifactHash.slice(0, 12)}: done`,
          quiet,
        );
      else if (event.type === 'failed')
        progress(
          `kloop worker: ${event.job.partition} repeat ${event.job.repeat} (attempt ${event.attempt}): failed, to be retried: ${event.message ?? ''}`,
          quiet,
        );
    },
    log: (message) => progress(`kloop worker: ${message}`, quiet),
  });
  progress(
    `kloop worker: serving evaluator ${base.fingerprint} (${study.executor.id}) of ${study.dir} on ${describeLocation(location)}, ${concurrency} job(s) at once; Ctrl-C to stop`,
    quiet,
  );
  context.signal.addEventListener('abort', () => void worker.stop(), { once: true });
  try {
    await worker.done;
  } finally {
    await worker.stop();
  }
  const interrupted = context.interrupted;
  if (options.json === true)
    printJson({
      study: study.dir,
      evaluator: base.fingerprint,
      jobs: { done: tally.done, failed: tally.failed },
      results: tally.results,
      interrupted,
    });
  return interrupted ? EXIT.interrupted : EXIT.ok;
}
