/**
 * Shared fixture of the PostgreSQL peer-fault tests (tests/peer-faults/pg-*):
 * a small intent study (14 examples, a lenient gate) in a temporary folder, a
 * fresh schema per test, an observer connection, and the CLI's processes
 * killed and the schemas dropped when the file ends.
 */
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestSchema } from '../../src/test-support/postgres.ts';
import { POSTGRES_TEST_URL, createTestSchema } from '../../src/test-support/postgres.ts';
import { EXAMPLE_STUDY, finished, spawnKloop } from '../reliability-fixture.ts';
import type { CliResult } from '../reliability-fixture.ts';

/** What a test file must undo, in reverse order, in its `afterAll`. */
export type Cleanups = Array<() => Promise<void> | void>;

/** Runs the cleanups in reverse order (each one's failure does not stop the others). */
export async function runCleanups(cleanups: Cleanups): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse())
    await Promise.resolve()
      .then(cleanup)
      .catch(() => undefined);
}

/** A small intent study: 14 examples of examples/intent, `extra` lines appended to its kloop.yaml. */
export function makeSmallStudy(cleanups: Cleanups, extra: string[] = []): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-peer-pg-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of ['playbook.yaml', 'program.md'])
    copyFileSync(path.join(EXAMPLE_STUDY, file), path.join(dir, file));
  mkdirSync(path.join(dir, 'corpus'));
  copyFileSync(
    path.join(EXAMPLE_STUDY, 'corpus', 'booking-and-membership.yaml'),
    path.join(dir, 'corpus', 'small.yaml'),
  );
  const lines = [
    'artifact: playbook.yaml',
    'corpus: corpus/small.yaml',
    'seed: 7',
    'proposer: { candidatesPerRound: 2, maxEvaluations: 20, maxScreened: 100 }',
    'gate: { alpha: 0.3, shadowAlpha: 0.5 }',
    'stopping: { maxExperiments: 4 }',
  ];
  writeFileSync(
    path.join(dir, 'kloop.yaml'),
    [...lines.filter((line) => !extra.some((other) => other.split(':')[0] === line.split(':')[0])), ...extra].join(
      '\n',
    ),
  );
  return dir;
}

/** A fresh schema, dropped (with its queue schema) when the file ends. */
export async function freshSchema(cleanups: Cleanups): Promise<TestSchema> {
  const schema = await createTestSchema();
  cleanups.push(() => schema.drop());
  return schema;
}

/** A connection of the test's own to the test server. */
export async function observer(cleanups: Cleanups, url = POSTGRES_TEST_URL): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  cleanups.push(() => client.end().catch(() => undefined));
  return client;
}

/** A started CLI process and its collected output. */
export interface Started {
  child: ChildProcess;
  result: Promise<CliResult>;
}

/** Starts `kloop …args` (killed with SIGKILL when the file ends, if still running). */
export function start(cleanups: Cleanups, args: string[], env: NodeJS.ProcessEnv = {}): Started {
  const child = spawnKloop(args, { env: { ...process.env, NO_COLOR: '1', ...env } });
  const result = finished(child);
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGCONT');
      child.kill('SIGKILL');
    }
  });
  return { child, result };
}

/** The text a child has printed on stderr so far, live. */
export function stderrOf(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (chunk: Buffer | string) => (text += chunk.toString()));
  return () => text;
}
