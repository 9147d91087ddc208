/**
 * An online study on a shared PostgreSQL notebook with two app processes
 * assigning the same units at the same moment (tests/online-app-process.mjs,
 * the compiled library): no unit is in two arms, no exposure is stored
 * twice, and no outcome is lost or counted twice though each is sent twice
 * by each process — checked by counting rows.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { createIdeasProposer } from '../src/online/proposers/ideas-proposer.ts';
import { openOnlineStudy } from '../src/online/study/online-study.ts';
import { runSlowLoopStep } from '../src/online/study/slow-loop.ts';
import { createTestSchema, postgresAvailable, type TestSchema } from '../src/test-support/postgres.ts';
import { ROOT } from './reliability-fixture.ts';

const postgres = await postgresAvailable();
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function appProcess(folder: string, url: string, first: number, count: number) {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'tests/online-app-process.mjs'), folder, url, String(first), String(count)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const output: string[] = [];
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      output.push(line);
      if (line === 'ready') resolve();
    });
    child.once('close', () => reject(new Error(`the app process ended before it was ready: ${stderr}`)));
  });
  const done = new Promise<Record<string, string>>((resolve, reject) => {
    child.once('close', (code) =>
      code === 0
        ? resolve(JSON.parse(output.at(-1)!) as Record<string, string>)
        : reject(new Error(`exit ${code}: ${stderr}`)),
    );
  });
  return { child, ready, done };
}

describe.skipIf(!postgres)('an online study on PostgreSQL with two app processes', () => {
  it('assigns every unit once, to one arm, and counts every outcome once', async () => {
    const schema: TestSchema = await createTestSchema();
    cleanups.push(() => schema.drop());
    const folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-pg-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    writeFileSync(
      path.join(folder, 'kloop.yaml'),
      `mode: online\nartifact: strategy.md\nstorage: ${schema.url}\nmetrics:\n  primary: reply_rate\n`,
    );
    writeFileSync(path.join(folder, 'strategy.md'), 'Seed.\n');
    writeFileSync(
      path.join(folder, 'program.md'),
      '# Instructions\n- a\n# Constraints\nnone\n# Stopping criteria\nnever\n',
    );
    const study = await openOnlineStudy(folder, { now: () => new Date('2026-01-05T09:00:00.000Z') });
    cleanups.push(() => study.close());
    await runSlowLoopStep(study, createIdeasProposer());

    const first = appProcess(folder, schema.url, 0, 300);
    const second = appProcess(folder, schema.url, 150, 300);
    await Promise.all([first.ready, second.ready]);
    first.child.stdin!.write('go\n');
    second.child.stdin!.write('go\n');
    const [armsOne, armsTwo] = await Promise.all([first.done, second.done]);

    for (let unit = 150; unit < 300; unit += 1) expect(armsTwo[`unit-${unit}`]).toBe(armsOne[`unit-${unit}`]);
    const count = async (table: 'exposures' | 'outcomes') =>
      Number(
        (
          await study.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count('exposures')).toBe(450);
    expect(await count('outcomes')).toBe(450);
    const split = await study.db
      .selectFrom('exposures')
      .select('unit')
      .groupBy('unit')
      .having((eb) => eb.fn.count('arm').distinct(), '>', 1)
      .execute();
    expect(split).toEqual([]);
    const stored = await study.db.selectFrom('exposures').select(['unit', 'arm']).execute();
    for (const row of stored) expect(row.arm).toBe(armsOne[row.unit] ?? armsTwo[row.unit]);
  });
});
