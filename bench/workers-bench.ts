/**
 * Evaluation workers, measured (`npm run bench:workers`): throughput in
 * evaluations (example executions) per second of one coordinator with 1, 2
 * and 4 `kloop worker` processes, against the single-process evaluation of
 * the same work, in the same benchmark.
 *
 * The model is a loopback server speaking the OpenAI chat API that answers
 * each call after a fixed latency L and runs at most C calls at once per
 * worker (per API key: each process gets its own key, as each worker would
 * have its own model server or GPU). The study is a classification study
 * with an `llm` executor (`kloop init --task classification --executor llm`,
 * 40 optimization tickets); the work is K prompt variants evaluated on the
 * optimization partition at once, as a round's candidates are. One process
 * evaluates them with its executor (C calls at once: the cap); with W
 * workers, the coordinator's evaluator sends them to the job queue (batches
 * of B examples) and W workers take them. Target: throughput ≥ 0.8 × W × the
 * single-process throughput, up to 4 workers.
 *
 * Settings (environment): KLOOP_BENCH_SCREENING_ONLY=1 runs the screening
 * study alone (below); KLOOP_BENCH_LATENCY_MS (L, default 1000: a
 * local model's call; the figures are then the queue's, not this machine's
 * CPU), KLOOP_BENCH_CAP (C, default 4), KLOOP_BENCH_VARIANTS (K, default 4),
 * KLOOP_BENCH_BATCH (B, default 4), KLOOP_BENCH_POSTGRES_URL (default
 * postgres://postgres@127.0.0.1:5432/test), KLOOP_BENCH_PAUSE_MS (the fault
 * run's pause, default 30 000).
 *
 * The fault column: one more run, of 3 workers, in which worker 0 is paused
 * (SIGSTOP) at its first call for the pause and resumed (SIGCONT), and worker 1
 * is killed (SIGKILL) at its third call. The model server logs every call on
 * arrival (which process asked for which prompt × ticket); a worker's
 * duplicates are the calls beyond the first of the prompt × tickets it asked
 * for. Targets: 0 for the paused worker (it is late, not gone), at most one
 * job's worth (B) for the killed one.
 *
 * The screening study (bench/screening-study.ts): a whole `kloop run` with
 * the proposer's default screening, on a `command` executor of 50 ms latency,
 * in one process and with 4 workers; the decisions of both runs are compared
 * (they must be the same, in order). Target: 4 workers ≥ 3 × a single
 * process. Exits 1 when a target is missed or the decisions differ.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/storage/database.ts';
import { openEvaluationQueue } from '../src/storage/evaluation-queue.ts';
import { withArtifactOverride } from '../src/storage/registry.ts';
import { createLlmStudyPlugins } from '../src/study/llm-plugins.ts';
import { loadStudyAsync } from '../src/study/load-study.ts';
import type { LoadedStudy } from '../src/loop/loaded-study.ts';
import { createStudyEvaluator } from '../src/loop/evaluate-partition.ts';
import type { Evaluator } from '../src/evaluator/evaluator.ts';
import { makeLlmWorkerStudy, simulatedLabel } from '../src/test-support/llm-worker-study.ts';
import {
  SCREEN_CAP,
  SCREEN_LATENCY_MS,
  SCREEN_PER_QUEUE,
  measureScreeningStudy,
  type ScreeningRun,
} from './screening-study.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const LATENCY_MS = Number(process.env.KLOOP_BENCH_LATENCY_MS ?? 1000);
const CAP = Number(process.env.KLOOP_BENCH_CAP ?? 4);
const VARIANTS = Number(process.env.KLOOP_BENCH_VARIANTS ?? 4);
const BATCH = Number(process.env.KLOOP_BENCH_BATCH ?? 4);
const POSTGRES = process.env.KLOOP_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WORKERS = [1, 2, 4];
/** How long the fault run's paused worker stays stopped, in milliseconds (KLOOP_BENCH_PAUSE_MS, default 30 000). */
const PAUSE_MS = Number(process.env.KLOOP_BENCH_PAUSE_MS ?? 30_000);
/** Only the screening study (KLOOP_BENCH_SCREENING_ONLY=1). */
const SCREENING_ONLY = process.env.KLOOP_BENCH_SCREENING_ONLY === '1';
/** Workers of the screening study's run, and its target (× a single process). */
const SCREENING_WORKERS = 4;
const SCREENING_TARGET = 3;

/** One executor call as the model server saw it: which process (its API key) asked for which prompt × ticket. */
interface Call {
  key: string;
  body: string;
}

/** The model: latency L per call, at most C calls at once per API key (the rest wait in line); every call logged on arrival, `onCall` told first. */
async function startModelServer(): Promise<{
  url: string;
  server: Server;
  calls: () => number;
  log: Call[];
  onCall: { hook?: (call: Call) => void };
}> {
  const running = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  const log: Call[] = [];
  const onCall: { hook?: (call: Call) => void } = {};
  let calls = 0;
  const acquire = (key: string): Promise<void> =>
    new Promise((resolve) => {
      if ((running.get(key) ?? 0) < CAP) {
        running.set(key, (running.get(key) ?? 0) + 1);
        resolve();
      } else waiting.set(key, [...(waiting.get(key) ?? []), resolve]);
    });
  const release = (key: string): void => {
    const next = waiting.get(key)?.shift();
    if (next !== undefined) next();
    else running.set(key, (running.get(key) ?? 1) - 1);
  };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const key = String(request.headers.authorization ?? 'none');
      const call = { key, body };
      log.push(call);
      onCall.hook?.(call);
      void acquire(key).then(() => {
        setTimeout(() => {
          calls += 1;
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({
              id: `c${calls}`,
              object: 'chat.completion',
              created: 1_700_000_000,
              model: 'sim',
              choices: [
                {
                  index: 0,
                  message: { role: 'assistant', content: JSON.stringify({ label: simulatedLabel(body) }) },
                  finish_reason: 'stop',
                },
              ],
              usage: { prompt_tokens: 200, completion_tokens: 8, total_tokens: 208 },
            }),
          );
          release(key);
        }, LATENCY_MS);
      });
    });
    response.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    server,
    calls: () => calls,
    log,
    onCall,
  };
}

async function loadWithKey(dir: string, key: string): Promise<LoadedStudy> {
  return loadStudyAsync(
    dir,
    createLlmStudyPlugins({
      getDatabase: () => undefined,
      noCache: true,
      env: { ...process.env, KLOOP_BENCH_KEY: key },
    }),
  );
}

/** K prompt variants evaluated on optimization at once; returns evaluations per second. */
async function measure(
  study: LoadedStudy,
  evaluator: Evaluator,
  tag: string,
): Promise<{ seconds: number; evaluations: number }> {
  const variants = Array.from(
    { length: VARIANTS },
    (_, index) => `${study.artifactText}\n<!-- ${tag} variant ${index} -->\n`,
  );
  const started = process.hrtime.bigint();
  const scores = await Promise.all(
    variants.map((text) =>
      withArtifactOverride(text, () =>
        evaluator.evaluate({ artifactText: text, partition: 'optimization', examples: study.partitions.optimization }),
      ),
    ),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const evaluations = scores.reduce((sum, score) => sum + score.total, 0);
  const invalid = scores.reduce((sum, score) => sum + score.invalid, 0);
  if (invalid > 0)
    throw new Error(
      `${tag}: ${invalid} invalid outputs (${JSON.stringify(scores[0]!.examples.find((record) => !record.valid))})`,
    );
  return { seconds, evaluations };
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (pattern.test(text)) resolve();
    });
    child.once('close', (code) => reject(new Error(`worker exited ${code}: ${text}`)));
  });
}

const model = await startModelServer();
const dir = await makeLlmWorkerStudy(model.url, 'KLOOP_BENCH_KEY');
const results: Array<{ label: string; workers: number; seconds: number; evaluations: number }> = [];
const cleanups: Array<() => Promise<void> | void> = [
  () => rmSync(dir, { recursive: true, force: true }),
  () => void model.server.close(),
];

/** A fresh schema, W `kloop worker` processes (API keys `worker-<i>`) and a coordinator's queue; `body` runs with them. */
async function withWorkers<T>(
  tag: string,
  count: number,
  body: (evaluator: Evaluator, study: LoadedStudy, workers: ChildProcess[]) => Promise<T>,
): Promise<T> {
  const schema = `kloop_bench_${process.pid}_${tag}`;
  const admin = new pg.Client({ connectionString: POSTGRES });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = `${POSTGRES}${POSTGRES.includes('?') ? '&' : '?'}schema=${schema}`;
  cleanups.push(async () => {
    const cleaner = new pg.Client({ connectionString: POSTGRES });
    await cleaner.connect();
    await cleaner.query(`drop schema if exists ${schema} cascade; drop schema if exists ${schema}_queue cascade`);
    await cleaner.end();
  });
  const db = await openDatabase(url);
  const study = await loadWithKey(dir, 'coordinator');
  const queue = await openEvaluationQueue(url, db, { batchSize: BATCH });
  const workers = Array.from({ length: count }, (_, index) =>
    spawn(
      process.execPath,
      [
        path.join(ROOT, 'bin/kloop.js'),
        'worker',
        dir,
        '--db',
        url,
        '--concurrency',
        String(Math.ceil(CAP / BATCH) + 1),
        '--no-cache',
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, KLOOP_BENCH_KEY: `worker-${index}` },
      },
    ),
  );
  try {
    await Promise.all(workers.map((worker) => waitForLine(worker, /serving evaluator/)));
    return await body(createStudyEvaluator(study, openNotebook(db), { remote: queue }), study, workers);
  } finally {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.exitCode !== null || worker.signalCode !== null) return resolve();
            worker.once('close', () => resolve());
            worker.kill('SIGCONT');
            worker.kill('SIGTERM');
          }),
      ),
    );
    await queue.close();
    await db.destroy();
  }
}

/** Duplicate executor calls of `key`'s work: for each prompt × ticket it called, the calls beyond the first, by any process. */
function duplicatesOf(key: string, calls: readonly Call[]): number {
  const byBody = new Map<string, string[]>();
  for (const call of calls) byBody.set(call.body, [...(byBody.get(call.body) ?? []), call.key]);
  let extra = 0;
  for (const keys of byBody.values()) if (keys.includes(key)) extra += keys.length - 1;
  return extra;
}

let fault:
  | {
      seconds: number;
      evaluations: number;
      paused: number;
      killed: number;
      pausedDuplicates: number;
      killedDuplicates: number;
    }
  | undefined;
let screening: ScreeningRun[] = [];
try {
  screening = await measureScreeningStudy(POSTGRES, SCREENING_WORKERS);
  if (!SCREENING_ONLY) {
    const study = await loadWithKey(dir, 'single');
    const folder = mkdtempSync(path.join(tmpdir(), 'kloop-bench-single-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const db = await openDatabase(path.join(folder, 'kloop.db'));
    const run = await measure(study, createStudyEvaluator(study, openNotebook(db)), 'single');
    await db.destroy();
    results.push({ label: 'single process', workers: 0, ...run });
  }
  for (const count of SCREENING_ONLY ? [] : WORKERS) {
    const run = await withWorkers(String(count), count, (evaluator, study) =>
      measure(study, evaluator, `workers-${count}`),
    );
    results.push({ label: `${count} worker${count === 1 ? '' : 's'}`, workers: count, ...run });
  }
  // The fault run: 3 workers; worker-0 paused (SIGSTOP) for PAUSE_MS at its first call, then resumed; worker-1 killed (SIGKILL) at its third call.
  if (!SCREENING_ONLY)
    fault = await withWorkers('fault', 3, async (evaluator, study, workers) => {
      const first = model.log.length;
      let seen0 = 0;
      let seen1 = 0;
      model.onCall.hook = (call) => {
        if (call.key === 'Bearer worker-0' && ++seen0 === 1) {
          workers[0]!.kill('SIGSTOP');
          setTimeout(() => workers[0]!.kill('SIGCONT'), PAUSE_MS).unref();
        }
        if (call.key === 'Bearer worker-1' && ++seen1 === 3) workers[1]!.kill('SIGKILL');
      };
      const run = await measure(study, evaluator, 'fault');
      model.onCall.hook = undefined;
      const calls = model.log.slice(first);
      return {
        ...run,
        paused: seen0,
        killed: seen1,
        pausedDuplicates: duplicatesOf('Bearer worker-0', calls),
        killedDuplicates: duplicatesOf('Bearer worker-1', calls),
      };
    });
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}

let missed = false;
if (screening.length === 2) {
  const [alone, spread] = screening as [ScreeningRun, ScreeningRun];
  const ratio = alone.seconds / spread.seconds;
  const same = JSON.stringify(alone.decisions) === JSON.stringify(spread.decisions);
  if (ratio < SCREENING_TARGET || !same) missed = true;
  process.stdout.write(
    `\nscreening study: kloop run on examples/support-routing (${SCREEN_PER_QUEUE} optimization tickets per queue, every anchor and shadow ticket), a command executor of L = ${SCREEN_LATENCY_MS} ms, at most ${SCREEN_CAP} program(s) at once per process, the proposer's default screening\n\n`,
  );
  process.stdout.write(
    '| run | executor calls | experiments | stop | seconds | calls/s | × single process | target |\n|---|---|---|---|---|---|---|---|\n',
  );
  for (const run of screening) {
    const times = alone.seconds / run.seconds;
    const target =
      run.workers === 0 ? '' : `${SCREENING_TARGET.toFixed(1)}${times >= SCREENING_TARGET ? ' met' : ' MISSED'}`;
    process.stdout.write(
      `| ${run.label} | ${run.calls} | ${run.experiments} | ${run.stopReason} | ${run.seconds.toFixed(2)} | ${(run.calls / run.seconds).toFixed(1)} | ${times.toFixed(2)} | ${target} |\n`,
    );
  }
  process.stdout.write(
    `\ndecisions of the two runs: ${same ? `the same ${alone.decisions.length}, in order` : 'DIFFER'}\n`,
  );
}
if (SCREENING_ONLY) process.exit(missed ? 1 : 0);
const single = results[0]!;
const rate = (run: { seconds: number; evaluations: number }): number => run.evaluations / run.seconds;
process.stdout.write(
  `\nevaluation workers: L = ${LATENCY_MS} ms per call, at most ${CAP} calls at once per process, ${VARIANTS} artifacts × 40 examples, batches of ${BATCH}\n\n`,
);
process.stdout.write(
  '| run | evaluations | seconds | evaluations/s | × single process | target (0.8 × W) |\n|---|---|---|---|---|---|\n',
);
for (const run of results) {
  const ratio = rate(run) / rate(single);
  const target =
    run.workers === 0 ? '' : `${(0.8 * run.workers).toFixed(1)}${ratio >= 0.8 * run.workers ? ' met' : ' MISSED'}`;
  if (run.workers > 0 && ratio < 0.8 * run.workers) missed = true;
  process.stdout.write(
    `| ${run.label} | ${run.evaluations} | ${run.seconds.toFixed(2)} | ${rate(run).toFixed(1)} | ${ratio.toFixed(2)} | ${target} |\n`,
  );
}
process.stdout.write(`\nideal single process: ${(CAP / (LATENCY_MS / 1000)).toFixed(1)} evaluations/s (C / L)\n`);
if (fault !== undefined) {
  const pausedMet = fault.pausedDuplicates === 0;
  const killedMet = fault.killedDuplicates <= BATCH;
  if (!pausedMet || !killedMet) missed = true;
  process.stdout.write(
    `\nfaults, in one run of 3 workers: worker-0 paused ${PAUSE_MS / 1000} s (SIGSTOP) at its first call and resumed; worker-1 killed (SIGKILL) at its third call\n\n`,
  );
  process.stdout.write(
    '| run | evaluations | seconds | duplicate executor calls, paused worker (target 0) | duplicate executor calls, killed worker (target ≤ one job: B) |\n|---|---|---|---|---|\n',
  );
  process.stdout.write(
    `| fault run | ${fault.evaluations} | ${fault.seconds.toFixed(2)} | ${fault.pausedDuplicates}${pausedMet ? ' met' : ' MISSED'} | ${fault.killedDuplicates} of ≤ ${BATCH}${killedMet ? ' met' : ' MISSED'} |\n`,
  );
}
process.exit(missed ? 1 : 0);
