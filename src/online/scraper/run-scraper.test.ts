/**
 * The metric scraper: run with `--since <cursor>`, its good lines stored once
 * and the cursor moved to the latest; a crash, a hang or a clock that went
 * backwards stores nothing, keeps the cursor and records the error.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readOnlineState } from '../../storage/online-store.ts';
import { createIdeasProposer } from '../proposers/ideas-proposer.ts';
import { openOnlineStudy } from '../study/online-study.ts';
import { runSlowLoopStep } from '../study/slow-loop.ts';
import { runScraper, SCRAPER_CURSOR_KEY, SCRAPER_LAST_KEY } from './run-scraper.ts';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

const SCRAPER = `
const since = process.argv[process.argv.indexOf('--since') + 1];
const mode = require('fs').readFileSync(__dirname + '/mode.txt', 'utf8').trim();
require('fs').appendFileSync(__dirname + '/calls.txt', since + '\\n');
if (mode === 'crash') { console.log(JSON.stringify({ unit: 'u1', metric: 'reply_rate', value: 1, at: '2026-01-05T10:30:00Z' })); process.stderr.write('database is down\\n'); process.exit(3); }
if (mode === 'hang') setTimeout(() => {}, 60000);
else {
  console.log(JSON.stringify({ unit: 'u1', metric: 'reply_rate', value: 1, at: '2026-01-05T10:00:00Z' }));
  console.log(JSON.stringify({ unit: 'u2', metric: 'reply_rate', value: 1, at: '2026-01-05T10:20:00Z' }));
  console.log('{"unit":"nobody","metric":"reply_rate","value":1,"at":"2026-01-05T10:40:00Z"}');
}
`;

async function setUp(mode: string) {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-scraper-'));
  folders.push(folder);
  writeFileSync(
    path.join(folder, 'kloop.yaml'),
    `mode: online\nartifact: strategy.md\nmetrics:\n  primary: reply_rate\n  scraper: { command: [${JSON.stringify(process.execPath)}, scrape.cjs], timeoutMs: 1500 }\n`,
  );
  writeFileSync(path.join(folder, 'strategy.md'), 'Seed.\n');
  writeFileSync(
    path.join(folder, 'program.md'),
    '# Instructions\n- a\n# Constraints\nnone\n# Stopping criteria\nnever\n',
  );
  writeFileSync(path.join(folder, 'scrape.cjs'), SCRAPER);
  writeFileSync(path.join(folder, 'mode.txt'), mode);
  const clock = { now: new Date('2026-01-05T09:00:00.000Z') };
  const study = await openOnlineStudy(folder, { now: () => clock.now });
  await runSlowLoopStep(study, createIdeasProposer());
  await study.assignMany(['u1', 'u2']);
  clock.now = new Date('2026-01-05T12:00:00.000Z');
  return { folder, study, clock };
}

const outcomes = async (study: Awaited<ReturnType<typeof openOnlineStudy>>) =>
  Number(
    (
      await study.db
        .selectFrom('outcomes')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('the metric scraper', () => {
  it('stores its good lines once and moves the cursor to the latest', async () => {
    const { folder, study, clock } = await setUp('ok');
    try {
      const first = await runScraper(study);
      expect(first).toMatchObject({
        outcome: 'ok',
        since: '1970-01-01T00:00:00.000Z',
        cursor: '2026-01-05T10:20:00.000Z',
        stored: 2,
        duplicates: 0,
        refused: 1,
      });
      clock.now = new Date('2026-01-05T13:00:00.000Z');
      expect(await runScraper(study)).toMatchObject({
        outcome: 'ok',
        since: '2026-01-05T10:20:00.000Z',
        stored: 0,
        duplicates: 2,
      });
      expect(await outcomes(study)).toBe(2);
      const { readFileSync } = await import('node:fs');
      expect(readFileSync(path.join(folder, 'calls.txt'), 'utf8')).toBe(
        '1970-01-01T00:00:00.000Z\n2026-01-05T10:20:00.000Z\n',
      );
    } finally {
      await study.close();
    }
  });

  it.each([
    ['crash', /exited with code 3; stderr: database is down/],
    ['hang', /timed out after 1500 ms/],
  ])('a scraper that fails (%s) stores nothing, keeps the cursor and records the error', async (mode, message) => {
    const { study } = await setUp(mode);
    try {
      const result = await runScraper(study);
      expect(result?.outcome).toBe('failed');
      expect(result?.outcome === 'failed' ? result.error : '').toMatch(message);
      expect(await outcomes(study)).toBe(0);
      expect(await readOnlineState(study.db, SCRAPER_CURSOR_KEY)).toBeUndefined();
      expect(JSON.parse((await readOnlineState(study.db, SCRAPER_LAST_KEY))!).error).toMatch(message);
    } finally {
      await study.close();
    }
  });

  it('refuses a clock that went backwards since the last scrape', async () => {
    const { study, clock } = await setUp('ok');
    try {
      await runScraper(study);
      clock.now = new Date('2026-01-05T11:00:00.000Z');
      const result = await runScraper(study);
      expect(result?.outcome === 'failed' ? result.error : '').toMatch(/a clock that goes backwards is refused/);
      expect(await readOnlineState(study.db, SCRAPER_CURSOR_KEY)).toBe('2026-01-05T10:20:00.000Z');
    } finally {
      await study.close();
    }
  });
});
