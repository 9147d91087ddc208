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
 * Settings (environment): KLOOP_BENCH_LATENCY_MS (L, default 1000: a
 * local model's call; the figures are then the queue's, not this machine's
 * CPU), KLOOP_BENCH_CAP (C, default 4), KLOOP_BENCH_VARIANTS (K, default 4),
 * KLOOP_BENCH_BATCH (B, default 4), KLOOP_BENCH_POSTGRES_URL (default
 * postgres://postgres@127.0.0.1:5432/test). Exits 1 when the target is missed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, readdirSync, unlinkSync } from 'node:fs';
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
import type { LoadedStudy } from '../src/study/loaded-study.ts';
import { createStudyEvaluator } from '../src/study/run-study.ts';
import type { Evaluator } from '../src/evaluator/evaluator.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const LATENCY_MS = Number(process.env.KLOOP_BENCH_LATENCY_MS ?? 1000);
const CAP = Number(process.env.KLOOP_BENCH_CAP ?? 4);
const VARIANTS = Number(process.env.KLOOP_BENCH_VARIANTS ?? 4);
const BATCH = Number(process.env.KLOOP_BENCH_BATCH ?? 4);
const POSTGRES = process.env.KLOOP_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WORKERS = [1, 2, 4];
const LABELS = ['billing', 'technical', 'account', 'shipping'];

/** The model: latency L per call, at most C calls at once per API key (the rest wait in line). */
async function startModelServer(): Promise<{ url: string; server: Server; calls: () => number }> {
  const running = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
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
      void acquire(key).then(() => {
        setTimeout(() => {
          calls += 1;
          const text = body;
          const label = LABELS[[...text].reduce((sum, character) => sum + character.charCodeAt(0), 0) % LABELS.length];
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({
              id: `c${calls}`,
              object: 'chat.completion',
              created: 1_700_000_000,
              model: 'sim',
              choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ label }) }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 200, completion_tokens: 8, total_tokens: 208 },
            }),
          );
          release(key);
        }, LATENCY_MS);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server, calls: () => calls };
}

/** A classification study with an llm executor on the model server: 40 optimization, 4 anchor, 6 shadow tickets. */
function makeStudy(modelUrl: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-bench-workers-'));
  const init = spawn(process.execPath, [path.join(ROOT, 'bin/kloop.js'), 'init', dir, '--task', 'classification', '--executor', 'llm'], { stdio: 'ignore' });
  return new Promise<string>((resolve, reject) => {
    init.once('close', (code) => {
      if (code !== 0) return reject(new Error(`kloop init exited ${code}`));
      for (const file of readdirSync(path.join(dir, 'corpus'))) unlinkSync(path.join(dir, 'corpus', file));
      const topics = ['a refund of my invoice', 'the app crashes on start', 'I cannot sign in', 'my parcel is late', 'a charge I do not know', 'an error on the export page'];
      const records = Array.from({ length: 50 }, (_, index) => ({
        id: `ticket-${String(index + 1).padStart(3, '0')}`,
        input: `Ticket ${index + 1}: ${topics[index % topics.length]} (order ${1000 + index * 7})`,
        expected: { label: LABELS[index % LABELS.length] },
        partition: index < 40 ? 'optimization' : index < 44 ? 'anchor' : 'shadow',
      }));
      writeFileSync(path.join(dir, 'corpus', 'bench.jsonl'), `${records.map((record) => JSON.stringify(record)).join('\n')}\n`);
      const config = readFileSync(path.join(dir, 'kloop.yaml'), 'utf8')
        .replace(/model: openai:gpt-4\.1-mini[^\n]*/, `model: openai-compatible:sim\n  baseURL: ${modelUrl}\n  apiKeyEnv: KLOOP_BENCH_KEY`)
        .replace(/corpus:[^\n]*\n(\s+- [^\n]*\n)+/, 'corpus:\n  - corpus/*.jsonl\n');
      writeFileSync(path.join(dir, 'kloop.yaml'), config);
      resolve(dir);
    });
  });
}

async function loadWithKey(dir: string, key: string): Promise<LoadedStudy> {
  return loadStudyAsync(dir, createLlmStudyPlugins({ getDatabase: () => undefined, noCache: true, env: { ...process.env, KLOOP_BENCH_KEY: key } }));
}

/** K prompt variants evaluated on optimization at once; returns evaluations per second. */
async function measure(study: LoadedStudy, evaluator: Evaluator, tag: string): Promise<{ seconds: number; evaluations: number }> {
  const variants = Array.from({ length: VARIANTS }, (_, index) => `${study.artifactText}\n<!-- ${tag} variant ${index} -->\n`);
  const started = process.hrtime.bigint();
  const scores = await Promise.all(
    variants.map((text) => withArtifactOverride(text, () => evaluator.evaluate({ artifactText: text, partition: 'optimization', examples: study.partitions.optimization }))),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const evaluations = scores.reduce((sum, score) => sum + score.total, 0);
  const invalid = scores.reduce((sum, score) => sum + score.invalid, 0);
  if (invalid > 0) throw new Error(`${tag}: ${invalid} invalid outputs (${JSON.stringify(scores[0]!.examples.find((record) => !record.valid))})`);
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
const dir = await makeStudy(model.url);
const results: Array<{ label: string; workers: number; seconds: number; evaluations: number }> = [];
const cleanups: Array<() => Promise<void> | void> = [() => rmSync(dir, { recursive: true, force: true }), () => void model.server.close()];
try {
  {
    const study = await loadWithKey(dir, 'single');
    const folder = mkdtempSync(path.join(tmpdir(), 'kloop-bench-single-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const db = await openDatabase(path.join(folder, 'kloop.db'));
    const run = await measure(study, createStudyEvaluator(study, db), 'single');
    await db.destroy();
    results.push({ label: 'single process', workers: 0, ...run });
  }
  for (const count of WORKERS) {
    const schema = `kloop_bench_${process.pid}_${count}`;
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
      spawn(process.execPath, [path.join(ROOT, 'bin/kloop.js'), 'worker', dir, '--db', url, '--concurrency', String(Math.ceil(CAP / BATCH) + 1), '--no-cache'], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, KLOOP_BENCH_KEY: `worker-${index}` },
      }),
    );
    try {
      await Promise.all(workers.map((worker) => waitForLine(worker, /serving evaluator/)));
      const run = await measure(study, createStudyEvaluator(study, db, { remote: queue }), `workers-${count}`);
      results.push({ label: `${count} worker${count === 1 ? '' : 's'}`, workers: count, ...run });
    } finally {
      await Promise.all(workers.map((worker) => new Promise<void>((resolve) => (worker.exitCode !== null ? resolve() : (worker.once('close', () => resolve()), worker.kill('SIGTERM'))))));
      await queue.close();
      await db.destroy();
    }
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}

const single = results[0]!;
const rate = (run: { seconds: number; evaluations: number }): number => run.evaluations / run.seconds;
process.stdout.write(`\nevaluation workers: L = ${LATENCY_MS} ms per call, at most ${CAP} calls at once per process, ${VARIANTS} artifacts × 40 examples, batches of ${BATCH}\n\n`);
process.stdout.write('| run | evaluations | seconds | evaluations/s | × single process | target (0.8 × W) |\n|---|---|---|---|---|---|\n');
let missed = false;
for (const run of results) {
  const ratio = rate(run) / rate(single);
  const target = run.workers === 0 ? '' : `${(0.8 * run.workers).toFixed(1)}${ratio >= 0.8 * run.workers ? ' met' : ' MISSED'}`;
  if (run.workers > 0 && ratio < 0.8 * run.workers) missed = true;
  process.stdout.write(`| ${run.label} | ${run.evaluations} | ${run.seconds.toFixed(2)} | ${rate(run).toFixed(1)} | ${ratio.toFixed(2)} | ${target} |\n`);
}
process.stdout.write(`\nideal single process: ${(CAP / (LATENCY_MS / 1000)).toFixed(1)} evaluations/s (C / L)\n`);
process.exit(missed ? 1 : 0);
