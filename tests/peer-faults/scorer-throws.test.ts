/**
 * Peer fault 4 (issue #36; DSPy PR #7917): a scorer that throws on a
 * candidate's output killed every run: exit 2 with the exception, no report,
 * a `runs` row left open each time, the message not saying the output came
 * from a candidate, or which; and exit 2 had written the baseline's results.
 *
 * Now a scorer failure is that output's invalid score (`scorer_error`, never
 * stored): the candidate is refused `invalid` with the scorer's message in its
 * evidence (its experiment id, each failed example), and the run goes on to
 * its report. A scorer that fails on the incumbent's own output is bad input
 * (exit 2, code `custom_scorer`), the run is not recorded, and the exit-code
 * table says what was written before it (docs/reliability.md).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { kloop } from '../cli-in-process.ts';
import { makeCustomStudy, type CustomStudy } from './custom-study.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const THROWN = 'TypeError: cannot read the plan of a subscription ticket';

/** The sample score.ts, made to throw on a subscription ticket routed to `queue`. */
function throwOn(study: CustomStudy, queue: string): void {
  const head = 'export function score(output: Triage, expected: Triage, input: string): ScoreResult {\n';
  const text = study.read('score.ts');
  expect(text).toContain(head);
  study.write(
    'score.ts',
    text.replace(
      head,
      `${head}  if (output.label === '${queue}' && input.includes('subscription')) throw new TypeError('cannot read the plan of a subscription ticket');\n`,
    ),
  );
}

function query<T>(study: CustomStudy, sql: string): T[] {
  const db = new Database(path.join(study.dir, '.kloop', 'kloop.db'), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

describe("a scorer that throws on a candidate's output", () => {
  it("refuses that candidate invalid with the scorer's message and its example, and the run goes on to its report", async () => {
    const study = await makeCustomStudy(cleanups);
    throwOn(study, 'billing'); // the seed routes subscription tickets to technical: only candidates meet it
    // Unscreened edits (proposer.maxEvaluations 0), so the gate evaluates every candidate.
    study.write('kloop.yaml', study.read('kloop.yaml').replace(/maxEvaluations: 10 /, 'maxEvaluations: 0 '));
    const run = await kloop('run', study.dir, '--json');
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { stopReason: string; experiments: number };
    expect(report.stopReason).toBe('plateau');
    expect(report.experiments).toBe(10);
    expect(query<{ open: number }>(study, 'select count(*) as open from runs where ended_at is null')).toEqual([
      { open: 0 },
    ]);

    // The candidates that route subscription tickets to billing: refused invalid, each with the scorer's message.
    const history = JSON.parse((await kloop('history', study.dir, '--json')).stdout) as {
      experiments: Array<{ id: number; decision: string; reason: string; delta: string }>;
    };
    const failed = history.experiments.filter((experiment) => experiment.reason === 'invalid');
    expect(failed.length).toBeGreaterThan(0);
    for (const experiment of failed) {
      const detail = (
        JSON.parse((await kloop('show', study.dir, String(experiment.id), '--json')).stdout) as {
          checks: Array<{ detail: string }>;
        }
      ).checks[0]!.detail;
      expect(detail).toMatch(
        /^the scorer failed on \d of this candidate's 9 outputs on optimization and anchor \(not stored; a fixed scorer is a new evaluator\): the scorer failed on this output of example t0\d: /,
      );
    }
    // The one that adds "subscription" to the billing rule: all three subscription tickets of optimization.
    const subscription = failed.find((experiment) => /^\+\s+"subscription",?$/m.test(experiment.delta))!;
    const shown = await kloop('show', study.dir, String(subscription.id), '--json');
    const checks = (JSON.parse(shown.stdout) as { checks: Array<{ name: string; passed: boolean; detail: string }> })
      .checks;
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ name: 'validity', passed: false });
    expect(checks[0]!.detail).toMatch(
      /^the scorer failed on 3 of this candidate's 9 outputs on optimization and anchor \(not stored; a fixed scorer is a new evaluator\): the scorer failed on this output of example t01: /,
    );
    expect(checks[0]!.detail).toContain(`${path.join(study.dir, 'score.ts')}: score() threw ${THROWN}`);
    // Never stored: a fixed scorer is a new evaluator, and nothing of the old one is read as a result.
    expect(
      query<{ stored: number }>(
        study,
        "select count(*) as stored from example_results where score like '%scorer_error%'",
      ),
    ).toEqual([{ stored: 0 }]);
  }, 180_000);

  it("with the proposer's screening (the init default): the run ends with its report, exit 0, no run left open", async () => {
    const study = await makeCustomStudy(cleanups);
    throwOn(study, 'billing');
    const run = await kloop('run', study.dir);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^stop reason: /m);
    expect(query<{ open: number }>(study, 'select count(*) as open from runs where ended_at is null')).toEqual([
      { open: 0 },
    ]);
  }, 180_000);
});

describe("a scorer that throws on the seed's output", () => {
  it('is bad input: exit 2 naming the incumbent, the example and the file; no run recorded, nothing of the failure stored', async () => {
    const study = await makeCustomStudy(cleanups);
    throwOn(study, 'technical'); // the seed routes t01, t02 and t06 to technical
    const run = await kloop('run', study.dir, '--json');
    expect(run.code).toBe(2);
    const error = (JSON.parse(run.stdout) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('custom_scorer');
    expect(error.message).toMatch(
      /^the scorer failed on the incumbent's \(version 1\) output on the optimization partition, so no candidate can be judged: the scorer failed on this output of example t01: /,
    );
    expect(error.message).toContain(`${path.join(study.dir, 'score.ts')}: score() threw ${THROWN}`);
    // What exit 2 may have written here, as docs/reliability.md lists it: the first run's corpus admission and seed
    // version, and the seed's valid results; no run, no scorer failure, no loop state.
    expect(query<{ n: number }>(study, 'select count(*) as n from runs')).toEqual([{ n: 0 }]);
    expect(query<{ n: number }>(study, 'select count(*) as n from study_state')).toEqual([{ n: 0 }]);
    expect(query<{ n: number }>(study, 'select count(*) as n from corpus_members')).toEqual([{ n: 12 }]);
    expect(query<{ n: number }>(study, 'select count(*) as n from example_results where valid = 0')).toEqual([
      { n: 0 },
    ]);

    // kloop eval says the same of the seed: exit 2, with how many outputs the scorer failed on.
    const evaluated = await kloop('eval', study.dir, '--partition', 'optimization');
    expect(evaluated.code).toBe(2);
    expect(evaluated.stderr).toContain(
      'the scorer failed on 3 of the 6 outputs of active version 1; first: the scorer failed on this output of example t01: ',
    );
  }, 180_000);
});
