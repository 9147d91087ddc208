/**
 * Runs say what moved underneath them (issue 18, item 7): graduations and
 * rotations are printed as they happen and listed in the final report; the
 * report states that seed and best are compared on the current partitions,
 * with their sizes now and at the start of the run; a best artifact below the
 * baseline on a partition is flagged, in text and `--json`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { getRegistryVersion, putVersion, setRegistryVersion } from '../src/storage/registry.ts';
import { ablateArtifact } from '../src/calibration/calibration.ts';
import type { StudyReport } from '../src/report/report.ts';
import { describeComparison } from '../src/cli/commands/run.ts';
import { kloop, makeSmallStudy } from './small-intent-study.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

describe('the report of a run whose partitions moved', () => {
  it('lists each graduation, and compares seed and best on the partitions as they are now, with the sizes at the start', async () => {
    const study = makeSmallStudy({
      optimization: 6,
      anchor: 3,
      shadow: 9,
      config: [
        'proposer: { candidatesPerRound: 2, concurrency: 1 }',
        'stopping: { maxExperiments: 100, plateauRounds: 50, maxRounds: 2 }',
        'corpusPolicy: { graduateAfterRounds: 1, rotateSlice: 2, graduateAfterDecisions: 1000, maxShadowExposures: 1000 }',
      ],
    });
    cleanups.push(study.cleanup);
    const { code, stdout, stderr } = await kloop('run', study.dir, '--json');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as StudyReport;
    // Printed as they happen...
    const printed = stderr.split('\n').filter((line) => line.includes('graduated into optimization'));
    expect(printed.length).toBeGreaterThan(0);
    // ...and listed in the report, one entry per round boundary, 2 examples each (rotateSlice), from shadow.
    expect(report.corpusMoves).toHaveLength(printed.length);
    for (const move of report.corpusMoves)
      expect(move).toMatchObject({
        kind: 'graduated',
        from: 'shadow',
        to: 'optimization',
        exampleIds: [expect.any(String), expect.any(String)],
      });
    const moved = 2 * report.corpusMoves.length;
    expect(report.comparison).toEqual({
      on: 'current',
      sizes: { optimization: 6 + moved, anchor: 3, shadow: 9 - moved },
      sizesAtStart: { optimization: 6, anchor: 3, shadow: 9 },
      changed: true,
    });
    // The table's rows are the partitions as they are now.
    expect(report.details.baseline.optimization.examples).toBe(6 + moved);
    expect(report.details.best.shadow.examples).toBe(9 - moved);

    const lines = describeComparison(report);
    expect(lines[0]).toBe(
      `seed and best are both evaluated on the partitions as they are now: optimization ${6 + moved}, anchor 3, shadow ${9 - moved} (at the start of this run: optimization 6, anchor 3, shadow 9)`,
    );
    expect(lines[1]).toBe(`corpus moves during this run (${report.corpusMoves.length}):`);
    const first = report.corpusMoves[0]!;
    expect(lines[2]).toBe(
      `  after experiment ${first.afterExperiment}: 2 shadow example(s) graduated into optimization (${first.exampleIds.join(', ')})`,
    );
    // Each round's best composite says which optimization partition it is on.
    expect(stderr).toMatch(/round 1 done: .*best optimization composite \d\.\d{4} \(on 6 examples\)/);
    expect(stderr).toMatch(
      new RegExp(`round 2 done: .*best optimization composite \\d\\.\\d{4} \\(on ${6 + 2} examples\\)`),
    );

    // A run in which nothing moves says so.
    const again = JSON.parse((await kloop('run', study.dir, '--json')).stdout) as StudyReport;
    expect(again.corpusMoves).toEqual([]);
    expect(again.comparison.changed).toBe(false);
    expect(describeComparison(again)[0]).toMatch(/ \(unchanged during this run\)$/);
  }, 120_000);
});

describe('a best artifact below the baseline', () => {
  it('is flagged per partition, in text and --json', async () => {
    const study = makeSmallStudy({
      optimization: 6,
      anchor: 3,
      shadow: 5,
      config: ['stopping: { maxExperiments: 0 }'],
    });
    cleanups.push(study.cleanup);
    expect((await kloop('run', study.dir)).code).toBe(0);
    // Make the active version an ablated playbook (its lists emptied): worse than the seed.
    const db = await openDatabase(studyDatabasePath(study.dir));
    try {
      const seed = (await getRegistryVersion(db, 'seed'))!;
      const worse = await putVersion(db, ablateArtifact(seed.text), 'test', seed.id, null);
      await setRegistryVersion(db, worse.id, 'a worse version, for the test');
    } finally {
      await db.destroy();
    }
    const json = await kloop('run', study.dir, '--json');
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as StudyReport;
    expect(report.bestVersion).toBe(2);
    const below = (['optimization', 'anchor', 'shadow'] as const).filter(
      (name) => report.best[name]! < report.baseline[name]!,
    );
    expect(below.length).toBeGreaterThan(0);
    expect(report.belowBaseline).toEqual(
      below.map((partition) => ({
        partition,
        baseline: report.baseline[partition],
        best: report.best[partition],
        delta: report.best[partition]! - report.baseline[partition]!,
      })),
    );

    const text = await kloop('run', study.dir);
    for (const partition of below) {
      const entry = report.belowBaseline.find((item) => item.partition === partition)!;
      expect(text.stdout).toContain(
        `WARNING: the best artifact (v2) is below the baseline (v1) on ${partition}: composite ${entry.best.toFixed(4)} against ${entry.baseline.toFixed(4)}, composite ${entry.delta.toFixed(4)}`,
      );
    }
    // The seed against itself: nothing is flagged.
    const fresh = makeSmallStudy({
      optimization: 6,
      anchor: 3,
      shadow: 5,
      config: ['stopping: { maxExperiments: 0 }'],
    });
    cleanups.push(fresh.cleanup);
    expect((JSON.parse((await kloop('run', fresh.dir, '--json')).stdout) as StudyReport).belowBaseline).toEqual([]);
  }, 120_000);
});
