/**
 * Issue 36, fault 10: a resumed round found its decided experiments by delta
 * text, so of two different candidates of one round with the same delta, a
 * crash after the first's decision left the second never decided (the
 * resumed run skipped it as "decided before"), and `kloop doctor` said
 * healthy.
 *
 * Through the CLI: `kloop run` on a study whose round 1 proposes twins (the
 * same new line at the end and at the start of a section: one delta text,
 * two texts; tests/peer-faults/identical-deltas-study.ts) is killed with
 * SIGKILL while the second twin is being evaluated (the scripted server holds
 * that evaluation's request, so the kill lands after the first decision and
 * before the second, every time), resumed, and compared with an
 * uninterrupted run of the same study. Then the doctor is shown a notebook
 * that lost a candidate: a copy of that uninterrupted run's (made once, in
 * `beforeAll`, for both tests: the doctor's test ran the same study to the
 * end again, a CLI run of its own).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database.ts';
import { checkDatabase } from '../../src/doctor/doctor.ts';
import { modelArgs } from '../llm-stop-study.ts';
import type { FakeServer } from '../llm-fake-openai-server.ts';
import type { LlmStopStudy } from '../llm-stop-study.ts';
import { databaseFile, finished, runKloop, spawnKloop } from '../reliability-fixture.ts';
import Database from 'better-sqlite3';
import { GOOD_LINE, makeIdenticalDeltasStudy, serveIdenticalDeltas } from './identical-deltas-study.ts';

const studies: LlmStopStudy[] = [];
const copies: string[] = [];
afterAll(() => {
  studies.forEach((study) => study.cleanup());
  copies.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});

/** While true, the server holds the second twin's evaluation (rebased onto the first: the good line twice), never answering it. */
let holding = false;
let reached: () => void = () => undefined;
const never = new Promise<void>(() => undefined);
/** The uninterrupted run's study, and one server for every study of the file (the executor's identity names its host and port, so results are comparable). */
let reference: LlmStopStudy;
let server: FakeServer;
let uninterrupted: Awaited<ReturnType<typeof runKloop>>;
beforeAll(async () => {
  reference = makeIdenticalDeltasStudy();
  studies.push(reference);
  server = await serveIdenticalDeltas(reference, {
    hold: (chat) => {
      if (!holding || chat.system.split(GOOD_LINE).length - 1 < 2) return undefined;
      reached();
      return never;
    },
  });
  uninterrupted = await runKloop(['run', reference.dir, '--json', '--quiet', ...modelArgs(server)]);
}, 120_000);
afterAll(() => server?.close());

interface Row {
  round: number;
  candidate_id: string | null;
  delta: string;
  decision: string;
  reason: string;
  evidence: string;
}

function experiments(study: LlmStopStudy): Row[] {
  const sqlite = new Database(databaseFile(study.dir), { readonly: true });
  try {
    return sqlite.prepare('select * from experiments order by id').all() as Row[];
  } finally {
    sqlite.close();
  }
}

/** What an uninterrupted run and a resumed one must agree on (ids aside: they are compared apart, being new with the fix). */
const decisions = (rows: Row[]): Array<Omit<Row, 'candidate_id'>> =>
  rows.map(({ round, delta, decision, reason, evidence }) => ({ round, delta, decision, reason, evidence }));

describe('fault 10: a resumed round decides every candidate, whatever their delta text', () => {
  it('SIGKILL between the decisions of two candidates with one delta text: the resumed notebook equals the uninterrupted one', async () => {
    const reachedHold = new Promise<void>((resolve) => (reached = resolve));
    const killed = makeIdenticalDeltasStudy();
    studies.push(killed);
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    const expected = experiments(reference);
    // The premise: round 1 decides two candidates with one delta text, the first accepted.
    const roundOne = expected.filter((row) => row.round === 1);
    expect(roundOne.map((row) => [row.decision, row.delta])).toEqual([
      ['accepted', `## Roles\n+ ${GOOD_LINE}`],
      ['refused', `## Roles\n+ ${GOOD_LINE}`],
    ]);
    expect(expected.length).toBeGreaterThan(2);

    holding = true;
    const child = spawnKloop(['run', killed.dir, ...modelArgs(server)]);
    const done = finished(child);
    await reachedHold;
    child.kill('SIGKILL');
    const result = await done;
    expect(result.signal).toBe('SIGKILL');
    holding = false;
    // Killed after the first decision, before the second.
    expect(decisions(experiments(killed))).toEqual(decisions(roundOne.slice(0, 1)));

    const resumed = await runKloop(['run', killed.dir, '--json', '--quiet', ...modelArgs(server)]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const actual = experiments(killed);
    expect(decisions(actual)).toEqual(decisions(expected));
    // Each decision names the candidate it decided, the same identity as in the uninterrupted run.
    expect(actual.map((row) => row.candidate_id)).toEqual(expected.map((row) => row.candidate_id));
    expect(new Set(actual.map((row) => row.candidate_id)).size).toBe(actual.length);
    expect(actual[0]!.candidate_id).toMatch(/^r1\.c[01]\.[0-9a-f]{16}$/);
  }, 120_000);

  it('kloop doctor names a candidate a closed round proposed and never decided', async () => {
    // A copy of the uninterrupted run's notebook (the study folder as it left it).
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    const parent = mkdtempSync(path.join(tmpdir(), 'kloop-doctor-twins-'));
    copies.push(parent);
    const study = { dir: path.join(parent, 'study') };
    cpSync(reference.dir, study.dir, { recursive: true });
    const findingsOf = async (): Promise<Array<{ id: string; status: string; message: string }>> => {
      const db = await openDatabase(databaseFile(study.dir), { readonly: true });
      try {
        return (await checkDatabase(db)).filter(
          (finding) => finding.id === 'database.undecided-candidates' || finding.id === 'database.decided-once',
        );
      } finally {
        await db.destroy();
      }
    };
    // Healthy as written: twins with one delta are two decisions, not one decided twice.
    expect(await findingsOf()).toEqual([
      {
        area: 'database',
        id: 'database.decided-once',
        status: 'ok',
        message: 'no experiment was decided twice and no version accepted twice',
      },
      {
        area: 'database',
        id: 'database.undecided-candidates',
        status: 'ok',
        message: 'every candidate a closed round proposed was decided',
      },
    ]);

    // What the delta-keyed resume left: round 1's refused twin never decided.
    const sqlite = new Database(path.join(study.dir, '.kloop', 'kloop.db'));
    const lost = sqlite
      .prepare("select candidate_id from experiments where round = 1 and decision = 'refused'")
      .get() as { candidate_id: string };
    sqlite.prepare('delete from experiments where candidate_id = ?').run(lost.candidate_id);
    sqlite.close();
    const findings = await findingsOf();
    expect(findings.find((finding) => finding.id === 'database.undecided-candidates')).toMatchObject({
      status: 'problem',
      message: `candidates proposed in a closed round were never decided (round 1: ${lost.candidate_id}): the notebook differs from an uninterrupted run's`,
    });
  }, 120_000);
});
