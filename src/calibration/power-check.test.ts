import { rmSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Evaluator } from '../evaluator/evaluator.ts';
import { createStudyEvaluator } from '../loop/evaluate-partition.ts';
import { openDatabase } from '../storage/database.ts';
import { putVersion, setRegistryVersion } from '../storage/registry.ts';
import { writeRoutingStudy } from '../test-support/routing-study.ts';
import { kloop } from '../../tests/cli-in-process.ts';
import { checkMeasurement } from '../doctor/doctor.ts';
import { loadStudyAsync } from '../study/load-study.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { minimumFixesForMcNemar, powerWarnings, studyPowerWarnings } from './power-check.ts';

const scores = (values: number[]): Map<string, number> => new Map(values.map((value, index) => [`e${index}`, value]));

describe('power check', () => {
  it('needs ⌈log2(1/α)⌉ fixes for McNemar: 0.5^5 = 0.03125 ≤ 0.05 < 0.5^4 = 0.0625', () => {
    expect(minimumFixesForMcNemar(0.05)).toBe(5);
    expect(minimumFixesForMcNemar(0.01)).toBe(7); // 0.5^7 = 0.0078
    expect(minimumFixesForMcNemar(0.5)).toBe(1);
    expect(() => minimumFixesForMcNemar(0)).toThrow(RangeError);
  });

  it('warns a binary study whose incumbent gets too few examples wrong, per partition', () => {
    const warnings = powerWarnings({
      outcome: 'binary',
      alpha: 0.05,
      shadowAlpha: 0.05,
      optimization: scores([1, 1, 1, 0, 0, 1, 1, 1]),
      shadow: scores([0, 0, 0, 0, 0, 1]),
      optimizationSize: 9, // one invalid example: wrong too
      shadowSize: 6,
    });
    expect(warnings).toEqual([
      {
        partition: 'optimization',
        have: 3,
        needed: 5,
        message:
          "no change can reach significance on optimization: the incumbent gets 3 of its 9 examples wrong, and McNemar's exact test needs at least 5 fixed with none broken (p = 0.5^5 = 0.031 ≤ α = 0.05); add at least 2 optimization example(s) the incumbent gets wrong",
      },
    ]);
  });

  it('says nothing of a continuous study before any candidate was measured, and the median need after', () => {
    const base = {
      outcome: 'continuous' as const,
      alpha: 0.05,
      shadowAlpha: 0.05,
      optimization: scores([0.5]),
      shadow: scores([0.5]),
      optimizationSize: 6,
      shadowSize: 3,
    };
    expect(powerWarnings(base)).toEqual([]);
    // d_z = 0.408: 19 examples (the one-sided paired t-test; checked in stuck-advice.test.ts against SciPy).
    const [warning] = powerWarnings({ ...base, observedEffectSizes: [0.2, 0.408, 0.9] });
    expect(warning?.needed).toBe(19);
    expect(warning?.have).toBe(6);
  });
});

describe('the power check of a study folder (the incumbent evaluated, the notebook read)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('warns a binary study whose seed gets too few optimization examples wrong, not its shadow, which has enough', async () => {
    const dir = writeRoutingStudy({
      optimization: { right: 4, wrong: 2 },
      anchor: { right: 3, wrong: 0 },
      shadow: { right: 2, wrong: 5 },
    });
    dirs.push(dir);
    const study = await loadStudyAsync(dir);
    expect(study.task.outcome).toBe('binary');
    const warnings = await studyPowerWarnings({
      study,
      evaluator: createStudyEvaluator(study),
      incumbentText: study.artifactText,
    });
    expect(warnings).toEqual([
      {
        partition: 'optimization',
        have: 2,
        needed: 5,
        message:
          "no change can reach significance on optimization: the incumbent gets 2 of its 6 examples wrong, and McNemar's exact test needs at least 5 fixed with none broken (p = 0.5^5 = 0.031 ≤ α = 0.05); add at least 3 optimization example(s) the incumbent gets wrong",
      },
    ]);
    // The incumbent's text decides, not the seed file: rules that route every ticket right leave nothing to fix anywhere.
    const perfect = `${study.artifactText.replace('any: [invoice, refund*]', 'any: [money, paid, receipt, debiting, promo, dollars, pay, deduction, price, statement]')}`;
    const none = await studyPowerWarnings({ study, evaluator: createStudyEvaluator(study), incumbentText: perfect });
    expect(none.map((warning) => [warning.partition, warning.have])).toEqual([
      ['optimization', 0],
      ['shadow', 0],
    ]);
  });

  it('uses the shadow α on the shadow: 0.5^5 = 0.031 passes α = 0.05 but not shadowAlpha = 0.01 (7 needed)', async () => {
    const dir = writeRoutingStudy(
      { optimization: { right: 2, wrong: 5 }, anchor: { right: 3, wrong: 0 }, shadow: { right: 2, wrong: 5 } },
      'gate:\n  shadowAlpha: 0.01',
    );
    dirs.push(dir);
    const study = await loadStudyAsync(dir);
    const warnings = await studyPowerWarnings({
      study,
      evaluator: createStudyEvaluator(study),
      incumbentText: study.artifactText,
    });
    expect(warnings.map((warning) => [warning.partition, warning.have, warning.needed])).toEqual([['shadow', 5, 7]]);
  });

  it('reads the effect sizes of refused candidates from the notebook for a continuous task: d_z = t/√(df + 1)', async () => {
    const db = await openDatabase(':memory:');
    try {
      const seed = await putVersion(db, 'seed', 'seed', null, null);
      await setRegistryVersion(db, seed.id, 'seed');
      // t = 2.04, df = 24 → d_z = 2.04/5 = 0.408: 19 examples needed (as above); a McNemar refusal and an accepted one are not read.
      const evidence = (t: number, df: number) =>
        JSON.stringify({
          checks: [
            { name: 'margin', statistic: 0.05 },
            { name: 'significance', statistic: 0.1, data: { t, df, pValue: 0.1 } },
          ],
        });
      const mcnemar = JSON.stringify({
        checks: [
          {
            name: 'significance',
            statistic: 0.2,
            data: { pairedTest: 'mcnemar-exact', b: 2, c: 0, bothRight: 3, bothWrong: 1, pValue: 0.25 },
          },
        ],
      });
      for (const [round, reason, text] of [
        [1, 'not_significant', evidence(2.04, 24)],
        [2, 'not_significant', mcnemar],
        [3, 'anchor_regression', evidence(9, 24)],
      ] as const) {
        await sql`insert into experiments (run_id, round, proposer, base_version_id, candidate_hash, delta, rationale, decision, reason, evidence, accepted_version_id, fingerprint, seed, created_at)
          values (1, ${round}, 'p', ${seed.id}, ${`h${round}`}, ${`d${round}`}, 'r', 'refused', ${reason}, ${text}, null, 'f', 1, 't')`.execute(
          db,
        );
      }
      const study = {
        task: { id: 'continuous@1', outcome: 'continuous' },
        partitions: { optimization: new Array(6), anchor: [], shadow: new Array(3) },
        gate: { alpha: 0.05, shadowAlpha: 0.05 },
      } as unknown as LoadedStudy;
      const evaluator = {
        evaluate: () => Promise.reject(new Error('a continuous check evaluates nothing')),
      } as unknown as Evaluator;
      const warnings = await studyPowerWarnings({ study, evaluator, incumbentText: 'seed', db });
      expect(warnings.map((warning) => [warning.partition, warning.have, warning.needed])).toEqual([
        ['optimization', 6, 19],
      ]);
      expect(warnings[0]?.message).toBe(
        'at the effect sizes measured so far (median d_z = 0.408 over 1 refused candidate(s)), a change needs about 19 optimization examples to reach α = 0.05; the partition has 6',
      );
      expect(await studyPowerWarnings({ study, evaluator, incumbentText: 'seed' })).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});

describe('the power check in kloop run and kloop doctor', () => {
  it('prints WARNING lines before round 1 and reports powerWarnings in --json; doctor says the same', async () => {
    const dir = writeRoutingStudy({
      optimization: { right: 4, wrong: 2 },
      anchor: { right: 3, wrong: 0 },
      shadow: { right: 2, wrong: 5 },
    });
    try {
      const doctor = (
        await checkMeasurement(dir, {
          databaseFile: path.join(dir, '.kloop', 'kloop.db'),
          hasDatabase: false,
          openReadOnly: (file) => openDatabase(file, { readonly: true }),
        })
      ).filter((finding) => finding.id === 'setup.power');
      expect(doctor).toEqual([
        expect.objectContaining({
          id: 'setup.power',
          area: 'setup',
          status: 'info',
          message: expect.stringMatching(
            /^power: no change can reach significance on optimization: the incumbent gets 2 of its 6 examples wrong/,
          ),
        }),
      ]);
      expect(doctor[0]?.fix).toContain('until it gets at least 5 wrong');
      const run = await kloop('run', dir, '--json');
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stderr.split('\n');
      const warning = lines.findIndex((line) =>
        line.startsWith(
          'kloop: WARNING: no change can reach significance on optimization: the incumbent gets 2 of its 6 examples wrong',
        ),
      );
      const firstRound = lines.findIndex((line) => /^kloop: round 1:/.test(line));
      expect(warning, run.stderr).toBeGreaterThanOrEqual(0);
      expect(firstRound === -1 || warning < firstRound).toBe(true);
      const report = JSON.parse(run.stdout) as {
        powerWarnings: Array<{ partition: string; have: number; needed: number }>;
      };
      expect(report.powerWarnings.map((entry) => [entry.partition, entry.have, entry.needed])).toEqual([
        ['optimization', 2, 5],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the power check on the shadow (continuous tasks)', () => {
  const base = {
    outcome: 'continuous' as const,
    alpha: 0.05,
    shadowAlpha: 0.05,
    optimization: new Map<string, number>(),
    shadow: new Map<string, number>(),
    optimizationSize: 40,
    shadowSize: 22,
  };

  it('warns when the shadow test has under 80% power for the optimization gains measured, with the shadow size that would reach it', () => {
    // Median Δopt/SE = 1.5: power 1 − Φ(1.644854 − 1.5) = 0.442413; n = ⌈22·((1.644854 + 0.841621)/1.5)²⌉ = 61 (scipy.stats.norm).
    const warnings = powerWarnings({
      ...base,
      shadowEvidence: [
        { optimizationDelta: 0.015, standardError: 0.01 },
        { optimizationDelta: 0.03, standardError: 0.01 },
        { optimizationDelta: 0.01, standardError: 0.01 },
      ],
    });
    expect(warnings).toEqual([
      {
        partition: 'shadow',
        have: 22,
        needed: 61,
        message:
          "the shadow's test has power 0.44 (median over 3 decision(s) that reached it) to confirm the optimization gains measured so far at shadowAlpha = 0.05; about 61 shadow examples would give 0.8, the partition has 22: real gains will often be refused not_confirmed",
      },
    ]);
  });

  it('says nothing when the power is enough (Δopt/SE = 3: 0.912) or nothing reached the shadow', () => {
    expect(powerWarnings({ ...base, shadowEvidence: [{ optimizationDelta: 0.03, standardError: 0.01 }] })).toEqual([]);
    expect(powerWarnings({ ...base, shadowEvidence: [] })).toEqual([]);
  });
});
