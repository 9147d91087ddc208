/**
 * Ctrl-C stops spending at once (docs/reliability.md, "Ctrl-C"): `kloop run`
 * in a child process against a model server on 127.0.0.1 that holds every
 * answer back; SIGINT while the run's only possible request is in flight.
 * The request is aborted (its connection closed), no other request reaches
 * the server, and the run prints its report and exits 130 — long before the
 * 10-second grace timer, which would end it without a report.
 *
 * No timing decides the test: the server never answers while the child
 * runs, so a run that waited for an answer, or made a call after the
 * signal, could only end through the grace timer (no report) or never.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INTERRUPT_GRACE_MS, INTERRUPTED_EXIT_CODE } from '../src/cli/commands/run.ts';
import type { FakeResponse } from './llm-fake-openai-server.ts';
import { appendToRoles, makeLlmStopStudy, modelArgs, serveStudy } from './llm-stop-study.ts';
import { finished, snapshotDatabase, spawnKloop } from './reliability-fixture.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A study with one optimization example on a model server that holds every
 * extraction's answer until the test ends (an answer the process could only
 * get by waiting); `firstRequest` resolves when the first one arrives.
 */
async function studyWithHeldAnswers() {
  const study = makeLlmStopStudy({ optimization: 1, anchor: 2, shadow: 3 });
  cleanups.push(study.cleanup);
  const held: Array<() => void> = [];
  let arrived: () => void = () => undefined;
  const firstRequest = new Promise<void>((resolve) => (arrived = resolve));
  const server = await serveStudy(study, {
    proposer: (chat) => appendToRoles(chat, 'A rule.'),
    executor: (_chat, gold) => {
      arrived();
      return new Promise<FakeResponse>((resolve) => held.push(() => resolve({ content: JSON.stringify(gold) })));
    },
  });
  cleanups.push(() => server.close());
  cleanups.push(() => held.forEach((release) => release()));
  return { study, server, firstRequest };
}

describe('Ctrl-C with model calls in flight', () => {
  it('aborts them, starts no new call, prints the report and exits 130', async () => {
    // One optimization example: the baseline's one request is all the run can have in flight.
    const { study, server, firstRequest } = await studyWithHeldAnswers();

    const child = spawnKloop(['run', study.dir, '--json', ...modelArgs(server)]);
    const done = finished(child);
    await firstRequest;
    const requestsAtSignal = server.calls;
    const signalledAt = Date.now();
    child.kill('SIGINT');
    const result = await done;
    const windDownMs = Date.now() - signalledAt;
    console.info(`Ctrl-C with a call in flight: exit ${result.code} after ${windDownMs} ms`);

    expect(requestsAtSignal).toBe(1);
    expect(result.code, result.stderr).toBe(INTERRUPTED_EXIT_CODE);
    expect(server.calls).toBe(requestsAtSignal); // no request after the signal
    expect(server.aborted).toBe(1); // the one in flight was aborted, not awaited
    expect(windDownMs).toBeLessThan(INTERRUPT_GRACE_MS); // ended by itself, not by the grace timer
    expect(result.stderr).not.toContain('still busy');
    const report = JSON.parse(result.stdout) as {
      stopReason: string;
      exitCode: number;
      notEvaluated: Array<{ artifact: string; partition: string; reason: string }>;
    };
    expect(report).toMatchObject({ stopReason: 'interrupted', exitCode: INTERRUPTED_EXIT_CODE });
    // Nothing was finished: every partition is reported as not evaluated, because of the interrupt.
    expect(report.notEvaluated.map(({ artifact, partition, reason }) => `${artifact} ${partition} ${reason}`)).toEqual([
      'baseline optimization interrupted',
      'baseline anchor interrupted',
      'baseline shadow interrupted',
      'best optimization interrupted',
      'best anchor interrupted',
      'best shadow interrupted',
    ]);
    const notebook = snapshotDatabase(study.dir);
    expect(notebook.runs).toEqual([{ stopReason: 'interrupted', ended: true }]);
    expect(notebook.leases).toBe(0);
  }, 60_000);
});

describe('Ctrl-C during kloop calibrate', () => {
  it('aborts the call in flight, stores no calibration, gives the lease back and exits 130 with a word', async () => {
    const { study, server, firstRequest } = await studyWithHeldAnswers();

    const child = spawnKloop(['calibrate', study.dir, '--json', ...modelArgs(server)]);
    const done = finished(child);
    await firstRequest;
    child.kill('SIGINT');
    const result = await done;
    // Before, the process died at the signal: nothing said, and its lease left behind (doctor: held by a dead run).
    expect(result.code, result.stderr).toBe(INTERRUPTED_EXIT_CODE);
    expect(result.stderr).toContain('kloop: interrupted: the calibration was not stored');
    expect(JSON.parse(result.stdout)).toEqual({
      interrupted: true,
      message: 'interrupted: the calibration was not stored',
    });
    expect(snapshotDatabase(study.dir).leases).toBe(0);
    const db = new Database(path.join(study.dir, '.kloop', 'kloop.db'), { readonly: true });
    try {
      expect((db.prepare('select count(*) as n from calibrations').get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }
  }, 60_000);
});
