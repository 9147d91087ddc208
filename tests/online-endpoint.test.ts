/**
 * POST /assign and POST /outcomes of an online study over a real socket on
 * 127.0.0.1 with fetch: the signal endpoint's guard (401 without the token,
 * 413 beyond the body limit, 429 beyond the rate), 409 before the study
 * starts, sticky assignments, outcome lines stored once with bad lines
 * refused by line number and counted, and 409 for an assignment once the
 * study stopped, with nothing stored changed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdeasProposer } from '../src/online/proposers/ideas-proposer.ts';
import { createOnlineApp } from '../src/online/http/online-routes.ts';
import { ONLINE_STOPPED_KEY, openOnlineStudy, type OnlineStudy } from '../src/online/study/online-study.ts';
import { writeOnlineState } from '../src/storage/online-store.ts';
import { runSlowLoopStep } from '../src/online/study/slow-loop.ts';
import { listenApp, type SignalServer } from '../src/signals/server.ts';

const TOKEN = 'online-test-token-0123456789';
const folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-endpoint-'));
const clock = { now: new Date('2026-01-05T09:00:00.000Z') };
let study: OnlineStudy;
let server: SignalServer;

beforeAll(async () => {
  writeFileSync(
    path.join(folder, 'kloop.yaml'),
    'mode: online\nartifact: strategy.md\nmetrics:\n  primary: reply_rate\n  guardrails: [{ name: unsubscribe_rate, direction: decrease, margin: 0.01 }]\n',
  );
  writeFileSync(path.join(folder, 'strategy.md'), 'Seed.\n');
  writeFileSync(
    path.join(folder, 'program.md'),
    '# Instructions\n- Ask one question.\n# Constraints\nnone\n# Stopping criteria\nnever\n',
  );
  study = await openOnlineStudy(folder, { now: () => clock.now });
  server = await listenApp(createOnlineApp(study, { token: TOKEN, maxBodyBytes: 4096, ratePerSecond: 1, burst: 12 }), {
    port: 0,
  });
});
afterAll(async () => {
  await server.close();
  await study.close();
  rmSync(folder, { recursive: true, force: true });
});

function post(route: string, body: string, token = TOKEN): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
}

describe('the online endpoints of kloop serve', () => {
  it('guards, assigns, stores outcomes once and refuses bad lines by number', async () => {
    expect((await post('/assign', '{"unit":"r-1"}', 'wrong-token-0123456789')).status).toBe(401);
    const early = await post('/assign', '{"unit":"r-1"}');
    expect([early.status, ((await early.json()) as { error: string }).error]).toEqual([409, 'online.not_started']);
    await runSlowLoopStep(study, createIdeasProposer());

    const one = await post('/assign', '{"unit":"r-1"}');
    expect(one.status).toBe(200);
    const first = (await one.json()) as {
      unit: string;
      version: number;
      text: string;
      arm: string;
      experimentId: number;
      window: string;
    };
    expect(first).toMatchObject({ unit: 'r-1', version: 1, text: 'Seed.\n', experimentId: 1, window: 'decision' });
    const batch = await post('/assign', JSON.stringify({ units: ['r-1', 'r-2', 'r-3'] }));
    const assignments = ((await batch.json()) as { assignments: Array<{ unit: string; arm: string }> }).assignments;
    expect(assignments.map((assignment) => assignment.unit)).toEqual(['r-1', 'r-2', 'r-3']);
    expect(assignments[0]!.arm).toBe(first.arm);
    expect((await post('/assign', '{"units":[]}')).status).toBe(400);

    clock.now = new Date('2026-01-05T12:00:00.000Z');
    const lines = [
      '{"unit":"r-1","metric":"reply_rate","value":1,"at":"2026-01-05T10:00:00Z"}',
      '{"unit":"r-9","metric":"reply_rate","value":1,"at":"2026-01-05T10:00:00Z"}',
      '{"unit":"r-2","metric":"clicks","value":1,"at":"2026-01-05T10:00:00Z"}',
      '',
      '{"unit":"r-2","metric":"unsubscribe_rate","value":1,"at":"2026-01-05T11:00:00Z"}',
      '{broken',
    ].join('\n');
    const answer = await post('/outcomes', lines);
    expect(answer.status).toBe(200);
    const report = (await answer.json()) as {
      received: number;
      stored: number;
      duplicates: number;
      refused: number;
      issues: Array<{ line: number; reason: string }>;
    };
    expect([report.received, report.stored, report.duplicates, report.refused]).toEqual([5, 2, 0, 3]);
    expect(report.issues.map((issue) => issue.line)).toEqual([2, 3, 6]);
    expect(report.issues[0]!.reason).toMatch(/unknown unit "r-9"/);
    const again = (await (await post('/outcomes', lines)).json()) as { stored: number; duplicates: number };
    expect([again.stored, again.duplicates]).toEqual([0, 2]);
    expect(
      Number(
        (
          await study.db
            .selectFrom('outcomes')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(2);
    expect(
      Number(
        (
          await study.db
            .selectFrom('outcome_refusals')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(6);

    // An assignment request for a stopped study: 409 online.stopped, and nothing stored changes.
    const rows = async () => ({
      exposures: await study.db.selectFrom('exposures').selectAll().orderBy('id').execute(),
      outcomes: await study.db.selectFrom('outcomes').selectAll().orderBy('id').execute(),
      experiments: await study.db.selectFrom('online_experiments').selectAll().orderBy('id').execute(),
    });
    const before = await rows();
    await writeOnlineState(
      study.db,
      ONLINE_STOPPED_KEY,
      JSON.stringify({ reason: 'max_experiments', detail: 'test', at: clock.now.toISOString() }),
    );
    study.refresh();
    const late = await post('/assign', '{"unit":"r-late"}');
    expect([late.status, ((await late.json()) as { error: string }).error]).toEqual([409, 'online.stopped']);
    expect(await rows()).toEqual(before);
  });

  it('refuses a body beyond the limit with 413, and requests beyond the rate with 429', async () => {
    const big = await post('/outcomes', 'x'.repeat(5000));
    expect(big.status).toBe(413);
    let limited: Response | undefined;
    for (let index = 0; index < 20 && limited === undefined; index += 1) {
      const response = await post('/assign', '{"unit":"r-rate"}');
      if (response.status === 429) limited = response;
      else await response.arrayBuffer();
    }
    expect(limited?.headers.get('retry-after')).not.toBeNull();
  });
});
