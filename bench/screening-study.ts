/**
 * The screening study of `npm run bench:workers` (issue 36, fault 15): a
 * whole `kloop run` with the proposer's default screening, in one process
 * and as a coordinator with W `kloop worker` processes, on an executor with a
 * fixed latency.
 *
 * The study is examples/support-routing with a `command` executor (so the
 * keyword-rules proposer screens its edits with the executor, at its default
 * `maxEvaluations`, 76: up to 40 single edits and the bundles per round) and
 * a subset of its corpus: the first K optimization tickets of each queue's
 * file (KLOOP_BENCH_SCREEN_PER_QUEUE, default 4), every anchor and shadow
 * ticket. The program is `socat`, a few milliseconds of CPU: it passes the
 * executor's JSON line to a routing service on 127.0.0.1 and prints its
 * answer. The service routes the ticket by the candidate's rules file
 * exactly as the routing-rules executor does (src/executors/routing-rules/)
 * and answers after L ms (KLOOP_BENCH_SCREEN_LATENCY_MS, default 50): the
 * executor's latency, as a remote model or a compile step has. Every process
 * runs at most C programs at once (`executor.concurrency`,
 * KLOOP_BENCH_SCREEN_CAP, default 1): each worker brings its own share of
 * the executor, as each worker machine would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import pg from 'pg';
import { routeText } from '../src/executors/routing-rules/route-text.ts';
import { parseRoutingRules, type RoutingRules } from '../src/executors/routing-rules/routing-rules.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** The executor's latency per example, in milliseconds (L). */
export const SCREEN_LATENCY_MS = Number(process.env.KLOOP_BENCH_SCREEN_LATENCY_MS ?? 50);
/** Programs at once per process (C). */
export const SCREEN_CAP = Number(process.env.KLOOP_BENCH_SCREEN_CAP ?? 1);
/** Optimization tickets taken from each queue's file (K). */
export const SCREEN_PER_QUEUE = Number(process.env.KLOOP_BENCH_SCREEN_PER_QUEUE ?? 4);

/** The routing service: one JSON request line in, `{"label"}` out after the latency; `calls()` counts the answers. */
export async function startRoutingService(): Promise<{ port: number; server: Server; calls: () => number }> {
  const rulesOf = new Map<string, RoutingRules>();
  let calls = 0;
  // Half-open: the program closes its side once it has sent the request, and still reads the answer.
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    let buffer = '';
    let answered = false;
    const answer = (): void => {
      if (answered) return;
      answered = true;
      let reply: string;
      try {
        const request = JSON.parse(buffer.split('\n')[0]!) as { artifact: string; text: string };
        // Artifact files are content-addressed (src/executors/command/artifact-files.ts): one parse per path.
        let rules = rulesOf.get(request.artifact);
        if (rules === undefined)
          rulesOf.set(
            request.artifact,
            (rules = parseRoutingRules(readFileSync(request.artifact, 'utf8'), request.artifact)),
          );
        reply = JSON.stringify({ label: routeText(rules, request.text).label });
      } catch (error) {
        reply = JSON.stringify({ error: (error as Error).message });
      }
      setTimeout(() => {
        calls += 1;
        socket.end(`${reply}\n`);
      }, SCREEN_LATENCY_MS);
    };
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (buffer.includes('\n')) answer();
    });
    socket.on('end', answer);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, server, calls: () => calls };
}

/** Writes the study into a new temporary folder (the caller removes it); its program asks the service on `port`. */
export function makeScreeningStudy(port: number): string {
  const source = path.join(ROOT, 'examples/support-routing');
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-bench-screening-'));
  cpSync(path.join(source, 'rules.yaml'), path.join(dir, 'rules.yaml'));
  cpSync(path.join(source, 'program.md'), path.join(dir, 'program.md'));
  cpSync(path.join(source, 'corpus'), path.join(dir, 'corpus'), { recursive: true });
  for (const file of readdirSync(path.join(dir, 'corpus'))) {
    const records = parseYaml(readFileSync(path.join(dir, 'corpus', file), 'utf8')) as Array<{ partition: string }>;
    let optimization = 0;
    const kept = records.filter((record) => record.partition !== 'optimization' || ++optimization <= SCREEN_PER_QUEUE);
    writeFileSync(path.join(dir, 'corpus', file), stringifyYaml(kept));
  }
  const config = readFileSync(path.join(source, 'kloop.yaml'), 'utf8').replace(
    /executor:\n(?:[^\n]*\n)/,
    [
      'executor:',
      '  kind: command',
      `  command: [socat, -t, '30', '-', 'TCP:127.0.0.1:${port}']`,
      `  concurrency: ${SCREEN_CAP}`,
      '  deterministic: true',
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(dir, 'kloop.yaml'), config);
  return dir;
}

/** `kloop …args` to its end: exit code, stdout and stderr. */
export function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/kloop.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** One `kloop run` of the screening study: wall time, executor calls, and its decisions in order (round, candidate id, decision, reason, delta). */
export interface ScreeningRun {
  label: string;
  workers: number;
  seconds: number;
  calls: number;
  experiments: number;
  stopReason: string;
  decisions: string[];
}

/** A fresh schema of `postgres` (dropped, with its queue schema, by the returned cleanup) and its study URL. */
async function freshSchema(
  postgres: string,
  tag: string,
): Promise<{ url: string; schema: string; drop: () => Promise<void> }> {
  const schema = `kloop_bench_${process.pid}_${tag}`;
  const admin = new pg.Client({ connectionString: postgres });
  await admin.connect();
  await admin.query(
    `drop schema if exists ${schema} cascade; drop schema if exists ${schema}_queue cascade; create schema ${schema}`,
  );
  await admin.end();
  return {
    schema,
    url: `${postgres}${postgres.includes('?') ? '&' : '?'}schema=${schema}`,
    drop: async () => {
      const cleaner = new pg.Client({ connectionString: postgres });
      await cleaner.connect();
      await cleaner.query(`drop schema if exists ${schema} cascade; drop schema if exists ${schema}_queue cascade`);
      await cleaner.end();
    },
  };
}

async function decisionsOf(postgres: string, schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: postgres });
  await client.connect();
  try {
    const { rows } = await client.query<{
      round: number;
      candidate_id: string | null;
      decision: string;
      reason: string;
      delta: string;
    }>(`select round, candidate_id, decision, reason, delta from ${schema}.experiments order by id`);
    // Which candidate (round, position, content hash), how it was decided and why, in the order decided.
    return rows.map(
      (row) => `round ${row.round} ${row.candidate_id ?? '-'} ${row.decision} (${row.reason}): ${row.delta}`,
    );
  } finally {
    await client.end();
  }
}

/**
 * Runs the study once in one process (`kloop run`) and once with `workers`
 * `kloop worker` processes behind `kloop run --workers`, each on a fresh
 * schema of `postgres`.
 */
export async function measureScreeningStudy(postgres: string, workers: number): Promise<ScreeningRun[]> {
  const service = await startRoutingService();
  const dir = makeScreeningStudy(service.port);
  const runs: ScreeningRun[] = [];
  try {
    for (const count of [0, workers]) {
      const target = await freshSchema(postgres, `screening_${count}`);
      const started: ChildProcess[] = [];
      try {
        for (let index = 0; index < count; index += 1) {
          const worker = spawn(
            process.execPath,
            [path.join(ROOT, 'bin/kloop.js'), 'worker', dir, '--db', target.url, '--concurrency', '2'],
            { stdio: ['ignore', 'ignore', 'pipe'] },
          );
          started.push(worker);
          await new Promise<void>((resolve, reject) => {
            let text = '';
            worker.stderr!.on('data', (chunk: Buffer) => {
              text += chunk.toString('utf8');
              if (/serving evaluator/.test(text)) resolve();
            });
            worker.once('close', (code) => reject(new Error(`worker exited ${code}: ${text}`)));
          });
        }
        const callsBefore = service.calls();
        const clock = process.hrtime.bigint();
        const run = await runCli(['run', dir, '--db', target.url, '--json', ...(count > 0 ? ['--workers'] : [])]);
        const seconds = Number(process.hrtime.bigint() - clock) / 1e9;
        if (run.code !== 0)
          throw new Error(`kloop run${count > 0 ? ' --workers' : ''} exited ${run.code}: ${run.stderr.slice(-2000)}`);
        const report = JSON.parse(run.stdout) as { stopReason: string };
        const decisions = await decisionsOf(postgres, target.schema);
        runs.push({
          label: count === 0 ? 'single process' : `${count} workers`,
          workers: count,
          seconds,
          calls: service.calls() - callsBefore,
          experiments: decisions.length,
          stopReason: report.stopReason,
          decisions,
        });
      } finally {
        await Promise.all(
          started.map(
            (worker) =>
              new Promise<void>((resolve) => {
                if (worker.exitCode !== null || worker.signalCode !== null) return resolve();
                worker.once('close', () => resolve());
                worker.kill('SIGTERM');
              }),
          ),
        );
        await target.drop();
      }
    }
  } finally {
    service.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return runs;
}
