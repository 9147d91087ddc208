/**
 * Crash-resume fuzz (issue 36, "Done when"): `kloop run` killed with SIGKILL
 * at random moments, resumed each time, on SQLite and PostgreSQL, on a study
 * whose every round proposes two different candidates with one delta text
 * (tests/peer-faults/identical-deltas-study.ts), ends with the notebook of
 * the uninterrupted run, every time: the same decisions in the same order
 * with the same evidence and candidate identities, the same versions and
 * active version, no candidate decided twice, no lease left.
 *
 * A seed draws, for each of up to {@link KILLS} runs, a moment: a progress
 * line of the child, uniform over the lines an uninterrupted run prints
 * (counted first; none = from its start), plus a delay uniform in
 * [0, {@link MAX_DELAY_MS}) ms. Anchored on what the child has done, not on
 * wall time, the kills land all over the run however loaded the machine is:
 * loading, migrating, taking the lease, proposing, screening, between and
 * inside decisions, the report; a run that
 * finishes first ends the seed's kills, and so does a kill after the run
 * recorded its stop (while it wrote its report: the study is finished, and
 * another `kloop run` would start a new leg, as after any finished run). A
 * last run resumes the study to its end.
 *
 * `KLOOP_FUZZ_SEEDS=N` runs N seeds per backend (default 1: the suite's
 * size), from `KLOOP_FUZZ_FIRST_SEED` on (default: {@link SUITE_SEEDS}); the
 * seeds and kill moments are printed, and each is reproducible with
 * `KLOOP_FUZZ_FIRST_SEED`.
 *
 * The suite's seeds, one per backend (it ran both on both, 36010 and 36011:
 * 13 runs of the CLI; now 9, a third of the file's time): 36011 on SQLite
 * kills at lines 5 and 3 of 28 (loading, migrating, taking the lease,
 * proposing round 1), then its third moment (line 28) comes after the end;
 * 36010 on PostgreSQL kills at line 22 (between and inside the decisions of
 * the last round), then at lines 6 and 4, and the last run resumes. So each
 * backend is still killed more than once in a row and resumed, early and
 * (on PostgreSQL, whose resume takes a lease over) late; 36010's first moment
 * came after SQLite's faster run had ended, so it killed nothing there.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../src/stats/index.ts';
import { databaseExists, openDatabase } from '../../src/storage/database.ts';
import { listTables } from '../../src/storage/study-database.ts';
import { readStudyState } from '../../src/loop/study-state.ts';
import type { TestSchema } from '../../src/test-support/postgres.ts';
import { createTestSchema, postgresAvailable } from '../../src/test-support/postgres.ts';
import type { FakeServer } from '../llm-fake-openai-server.ts';
import type { LlmStopStudy } from '../llm-stop-study.ts';
import { modelArgs } from '../llm-stop-study.ts';
import { databaseFile, finished, spawnKloop, waitForLine } from '../reliability-fixture.ts';
import { makeIdenticalDeltasStudy, serveIdenticalDeltas } from './identical-deltas-study.ts';
import type { NotebookSnapshot } from './notebook-snapshot.ts';
import { snapshotNotebook } from './notebook-snapshot.ts';
import { openNotebook } from '../../src/storage/notebook/index.ts';

const postgres = await postgresAvailable();
const SEEDS = Number(process.env.KLOOP_FUZZ_SEEDS ?? 1);
/** The first seed of each backend when `KLOOP_FUZZ_FIRST_SEED` is not set (why these: the module comment). */
const SUITE_SEEDS = { sqlite: 36_011, postgres: 36_010 } as const;
const firstSeed = (backend: keyof typeof SUITE_SEEDS): number =>
  Number(process.env.KLOOP_FUZZ_FIRST_SEED ?? SUITE_SEEDS[backend]);
/** Most kills per seed (fewer when a run finishes first). */
const KILLS = 3;
/** The longest delay after the anchor line, in milliseconds. */
const MAX_DELAY_MS = 400;

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Target {
  study: LlmStopStudy;
  args: string[];
  location: string;
}

async function newTarget(backend: 'sqlite' | 'postgres'): Promise<Target> {
  const study = makeIdenticalDeltasStudy();
  cleanups.push(() => study.cleanup());
  if (backend === 'sqlite') return { study, args: [], location: databaseFile(study.dir) };
  const schema: TestSchema = await createTestSchema();
  cleanups.push(() => schema.drop());
  return { study, args: ['--db', schema.url], location: schema.url };
}

function run(target: Target, server: FakeServer, extra: string[] = []): ReturnType<typeof spawnKloop> {
  return spawnKloop(['run', target.study.dir, ...target.args, ...modelArgs(server), ...extra]);
}

/**
 * The stop the study recorded (`study_state`), or null while it is not
 * stopped (or was interrupted). A run killed after recording its stop (while
 * it writes its report) has finished the study: the next `kloop run` would
 * start a new leg, as after any finished run.
 */
async function recordedStop(location: string): Promise<string | null> {
  if (!(await databaseExists(location))) return null; // killed before the notebook was created
  const db = await openDatabase(location, { readonly: true });
  try {
    if (!(await listTables(db)).has('study_state')) return null; // killed before it was migrated
    const state = await readStudyState(openNotebook(db));
    return state.lastStopReason === 'interrupted' ? null : state.lastStopReason;
  } finally {
    await db.destroy();
  }
}

/** Kills runs of the target at the seed's moments, then resumes it to the end; returns what happened. */
async function fuzzSeed(
  target: Target,
  server: FakeServer,
  seed: number,
  lines: number,
): Promise<{ kills: number; moments: string[]; stopReason: string }> {
  const random = createSeededRandom(seed);
  const moments: string[] = [];
  let kills = 0;
  for (let index = 0; index < KILLS; index += 1) {
    const line = Math.floor(random() * (lines + 1));
    const delayMs = Math.floor(random() * MAX_DELAY_MS);
    const moment = `line ${line} + ${delayMs} ms`;
    const child = run(target, server);
    const done = finished(child);
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => void (timer = setTimeout(() => child.kill('SIGKILL'), delayMs));
    if (line === 0) arm();
    else waitForLine(child, /./, line).then(arm, () => undefined);
    const result = await done;
    clearTimeout(timer);
    if (result.signal === 'SIGKILL') {
      kills += 1;
      const stopped = await recordedStop(target.location);
      moments.push(`${moment}${stopped !== null ? ' (after the stop was recorded)' : ''}`);
      if (stopped !== null) return { kills, moments, stopReason: stopped };
      continue;
    }
    // The run finished the study before its moment came: nothing left to resume.
    expect(result.code, result.stderr).toBe(0);
    moments.push(`${moment} (finished first)`);
    return { kills, moments, stopReason: (await recordedStop(target.location)) ?? 'none recorded' };
  }
  const last = await finished(run(target, server, ['--json', '--quiet']));
  expect(last.code, last.stderr).toBe(0);
  return { kills, moments, stopReason: (JSON.parse(last.stdout) as { stopReason: string }).stopReason };
}

function expectSameNotebook(
  actual: NotebookSnapshot,
  expected: NotebookSnapshot,
  label: string,
  killedAfterStop: boolean,
): void {
  expect(actual.decidedTwice, label).toBe(0);
  // A run killed after recording its stop leaves its (dead) lease, which the next run takes over at once.
  if (killedAfterStop) expect(actual.leases, label).toBeLessThanOrEqual(1);
  else expect(actual.leases, label).toBe(0);
  expect(actual.experiments, label).toEqual(expected.experiments);
  expect(actual.versions, label).toEqual(expected.versions);
  expect(actual.active, label).toEqual(expected.active);
}

describe.each(['sqlite', 'postgres'] as const)('crash-resume fuzz on %s', (backend) => {
  it.runIf(backend === 'sqlite' || postgres)(
    `SIGKILL at random moments, ${SEEDS} seeds: every resumed notebook equals the uninterrupted run's`,
    async () => {
      const started = Date.now();
      const reference = await newTarget(backend);
      const server = await serveIdenticalDeltas(reference.study);
      cleanups.push(() => server.close());
      const referenceStarted = Date.now();
      const uninterrupted = await finished(run(reference, server, ['--json']));
      const runMs = Date.now() - referenceStarted;
      expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
      const progressLines = uninterrupted.stderr.split('\n').filter((line) => line !== '').length;
      const expected = await snapshotNotebook(reference.location);
      const stopReason = (JSON.parse(uninterrupted.stdout) as { stopReason: string }).stopReason;
      // The premise: rounds with two candidates of one delta text, each decided.
      const rounds = new Map<number, string[]>();
      for (const experiment of expected.experiments)
        rounds.set(experiment.round, [...(rounds.get(experiment.round) ?? []), experiment.delta]);
      expect([...rounds.values()].every((deltas) => deltas.length === 2 && deltas[0] === deltas[1])).toBe(true);
      expect(rounds.size).toBeGreaterThanOrEqual(3);

      let kills = 0;
      const lines: string[] = [];
      for (let seed = firstSeed(backend); seed < firstSeed(backend) + SEEDS; seed += 1) {
        const target = await newTarget(backend);
        const outcome = await fuzzSeed(target, server, seed, progressLines);
        kills += outcome.kills;
        lines.push(`seed ${seed}: ${outcome.moments.join(', ')}`);
        expect(outcome.stopReason, `seed ${seed}`).toBe(stopReason);
        const killedAfterStop = outcome.moments.some((moment) => moment.includes('after the stop was recorded'));
        expectSameNotebook(
          await snapshotNotebook(target.location),
          expected,
          `seed ${seed} (${outcome.moments.join(', ')})`,
          killedAfterStop,
        );
      }
      console.info(
        `crash-resume fuzz (${backend}): ${SEEDS} seeds, ${kills} SIGKILLs, every notebook equal to the uninterrupted run's (${expected.experiments.length} experiments in ${rounds.size} rounds; an uninterrupted run ${runMs} ms, ${progressLines} progress lines); ${((Date.now() - started) / 1000).toFixed(1)} s\n  ${lines.join('\n  ')}`,
      );
    },
    600_000,
  );
});
