/**
 * Crash safety (DESIGN.md §7): `kloop run` interrupted with Ctrl-C (SIGINT,
 * after its second decision) and then killed with SIGKILL at 10 random
 * (seeded) moments of a deterministic study, resumed each time, ends with the
 * database an uninterrupted run of the same study writes: the same accepted
 * versions, the same decisions in the same order with the same evidence, the
 * same scores; no experiment decided twice, no evaluation stored twice, and
 * SQLite's integrity check ok.
 *
 * The study: 27 examples, 30 experiments in 5 rounds, 3 accepted (two
 * merged after another in the same round). A moment is a progress line of the child (the run start, a round's
 * proposals, a decision) plus a random delay, so the kills land where the run
 * writes: the run row and round state, the stored evaluations of screening,
 * the decisions, the round ends, the report.
 */
import { appendFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_EXIT_CODE } from '../src/cli/commands/run.ts';
import { createSeededRandom } from '../src/stats/index.ts';
import type { CliResult, DatabaseSnapshot } from './reliability-fixture.ts';
import { finished, makeStudy, runKloop, snapshotDatabase, spawnKloop, waitForLine } from './reliability-fixture.ts';

// Clean up once the test and the reference run are done.
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const KILLS = 10;
/** 27 examples; 30 experiments in 5 rounds, the first accepting 3 (two merged after another). */
const STUDY = { maxExperiments: 30, plateauRounds: 6 };
/** KLOOP_TEST_TRACE=<file> appends one line per kill (vitest shows console output only at the end). */
const trace = (line: string): void => {
  if (process.env.KLOOP_TEST_TRACE !== undefined) appendFileSync(process.env.KLOOP_TEST_TRACE, `${line}\n`);
};
const SEED = 20_251_129;

interface KillMoment {
  anchor: 'start' | 'run' | 'round' | 'decision';
  /** Which matching line of the child (the first, the second, …). */
  occurrence: number;
  delayMs: number;
}

/**
 * The seeded kill schedule: where each kill is anchored and how long after.
 * Delays after a decision are short, so a kill lands inside the next decision
 * (evaluations, the gate, the record transaction) and a child makes little
 * progress: ten kills do not finish the study, the final run does.
 */
function killSchedule(): KillMoment[] {
  const random = createSeededRandom(SEED);
  return Array.from({ length: KILLS }, () => {
    const draw = random();
    // Loading, migrating, taking the lease: the compiled CLI gets there within about half a second.
    if (draw < 0.1) return { anchor: 'start', occurrence: 1, delayMs: Math.floor(random() * 600) };
    if (draw < 0.3) return { anchor: 'run', occurrence: 1, delayMs: Math.floor(random() * 300) }; // run row, baseline, round opened, proposing
    if (draw < 0.65) return { anchor: 'round', occurrence: 1, delayMs: Math.floor(random() * 400) }; // screening evaluations, the first decision
    return { anchor: 'decision', occurrence: 1 + Math.floor(random() * 2), delayMs: Math.floor(random() * 30) }; // between and inside decisions
  });
}

const ANCHORS: Record<Exclude<KillMoment['anchor'], 'start'>, RegExp> = {
  run: /^run \d+:/,
  round: /^round \d+: /,
  decision: /^ {2}#\d+ /,
};

/** The uninterrupted reference run (started once, on first use; it runs while the interrupted study is interrupted). */
let referenceRun: Promise<{ study: string; result: CliResult }> | undefined;
const referenceCleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of referenceCleanups.splice(0)) cleanup();
});
function reference(): Promise<{ study: string; result: CliResult }> {
  referenceRun ??= (async () => {
    const study = makeStudy(referenceCleanups, STUDY);
    return { study, result: await runKloop(['run', study, '--json', '--quiet']) };
  })();
  return referenceRun;
}

/** Asserts the resumed study's notebook equals the reference's. */
function expectSameNotebook(actual: DatabaseSnapshot, expected: DatabaseSnapshot): void {
  expect(actual.integrity).toBe('ok');
  expect(actual.duplicateDecisions).toBe(0);
  expect(actual.duplicateEvaluations).toBe(0);
  expect(actual.acceptedTwice).toBe(0);
  expect(actual.leases).toBe(0);
  // Accepted versions (texts), decisions in order with their evidence, and every score.
  expect(expected.experiments.filter((experiment) => experiment.decision === 'accepted').length).toBeGreaterThan(1);
  expect(actual.versions).toEqual(expected.versions);
  expect(actual.active).toEqual(expected.active);
  expect(actual.experiments).toEqual(expected.experiments);
  expect(actual.evaluations).toEqual(expected.evaluations);
  // The runs cut short never recorded a stop (or recorded `interrupted`); the last one stopped like the reference.
  expect(actual.runs.at(-1)).toEqual(expected.runs.at(-1));
}

describe('a run killed at any moment resumes to the same notebook', () => {
  // One study takes both interruptions, Ctrl-C first and then the SIGKILLs, and is compared once with the
  // uninterrupted reference (which runs meanwhile): each interruption's own checks, then the notebook of the end.
  it(`Ctrl-C (SIGINT), then SIGKILL at ${KILLS} seeded moments, resumed each time, equals an uninterrupted run`, async () => {
    const started = Date.now();
    const referenceStarted = reference();
    const killed = makeStudy(cleanups, STUDY);

    // Ctrl-C abandons the work in flight, records `interrupted`, releases the lease; the next run continues.
    // The wind-down bound (INTERRUPT_GRACE_MS) is the product's; the test asserts what happened, not how fast (it logs the time).
    const interrupted = spawnKloop(['run', killed, '--json']);
    const interruptedDone = finished(interrupted);
    await waitForLine(interrupted, /^ {2}#2 /);
    const interruptedAt = Date.now();
    interrupted.kill('SIGINT');
    const interruptResult = await interruptedDone;
    const windDownMs = Date.now() - interruptedAt;
    expect(interruptResult.code, interruptResult.stderr).toBe(INTERRUPTED_EXIT_CODE);
    expect(interruptResult.stderr).toContain('kloop: interrupted — abandoning the evaluations in flight');
    const interruptReport = JSON.parse(interruptResult.stdout) as { stopReason: string; exitCode: number };
    expect(interruptReport).toMatchObject({ stopReason: 'interrupted', exitCode: INTERRUPTED_EXIT_CODE });
    const afterInterrupt = snapshotDatabase(killed);
    expect(afterInterrupt.runs).toEqual([{ stopReason: 'interrupted', ended: true }]);
    expect(afterInterrupt.leases).toBe(0);
    expect(afterInterrupt.integrity).toBe('ok');
    trace(`Ctrl-C at ${((Date.now() - started) / 1000).toFixed(1)} s: wound down in ${windDownMs} ms`);

    const outcomes: string[] = [];
    let kills = 0;
    for (const moment of killSchedule()) {
      const child = spawnKloop(['run', killed]);
      const done = finished(child);
      let reached = true;
      if (moment.anchor !== 'start')
        reached = await waitForLine(child, ANCHORS[moment.anchor], moment.occurrence).then(
          () => true,
          () => false,
        );
      if (reached) await new Promise((resolve) => setTimeout(resolve, moment.delayMs));
      const wasRunning = child.exitCode === null && child.signalCode === null;
      if (wasRunning) child.kill('SIGKILL');
      const result = await done;
      if (result.signal === 'SIGKILL') kills += 1;
      else expect(result.code, result.stderr).toBe(0); // the study finished before this moment came
      outcomes.push(
        `${moment.anchor}${moment.occurrence > 1 ? `#${moment.occurrence}` : ''}+${moment.delayMs}ms: ${result.signal ?? `exit ${result.code}`}`,
      );
      trace(`kill ${outcomes.length} at ${((Date.now() - started) / 1000).toFixed(1)} s: ${outcomes.at(-1)}`);
    }

    // Resume to the end.
    const last = await runKloop(['run', killed, '--json', '--quiet']);
    expect(last.code, last.stderr).toBe(0);
    const { study: referenceStudy, result: referenceResult } = await referenceStarted;
    expect(referenceResult.code, referenceResult.stderr).toBe(0);

    const expected = snapshotDatabase(referenceStudy);
    const actual = snapshotDatabase(killed);
    console.info(
      `crash-resume: Ctrl-C wound down in ${windDownMs} ms; ${kills} SIGKILLs of ${KILLS} moments (${outcomes.join('; ')}); ${expected.experiments.length} experiments; ${actual.runs.length} runs; ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    expectSameNotebook(actual, expected);
    expect(actual.runs[0]).toEqual({ stopReason: 'interrupted', ended: true }); // the Ctrl-C's record stays
    expect(kills).toBe(KILLS);

    const reportedBest = (JSON.parse(last.stdout) as { best: unknown }).best;
    expect(reportedBest).toEqual((JSON.parse(referenceResult.stdout) as { best: unknown }).best);
  }, 900_000);
});
