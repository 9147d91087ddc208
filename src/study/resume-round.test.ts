/**
 * A round resumed after a crash finishes exactly as the uninterrupted round:
 * the crash is simulated in-process right after a decision is committed (the
 * progress event that follows it throws), at every decision of a small study;
 * each resumed study must equal the uninterrupted one.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { loadStudy } from './load-study.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { runStudy } from '../loop/run-study.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import { openNotebook } from '../storage/notebook/index.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/intent');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function smallStudy(maxExperiments: number): LoadedStudy {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-resume-round-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'corpus'));
  for (const file of ['program.md', 'playbook.yaml']) copyFileSync(path.join(EXAMPLE, file), path.join(dir, file));
  for (const file of ['work.yaml', 'operations.yaml', 'extra.jsonl'])
    copyFileSync(path.join(EXAMPLE, 'corpus', file), path.join(dir, 'corpus', file));
  const config = readFileSync(path.join(EXAMPLE, 'kloop.yaml'), 'utf8')
    .replace(/maxExperiments: \d+/, `maxExperiments: ${maxExperiments}`)
    .replace(/( {2}concurrency: \d+)/, '$1\n  maxEvaluations: 10\n  maxScreened: 100');
  writeFileSync(path.join(dir, 'kloop.yaml'), config);
  return loadStudy(dir);
}

async function database(): Promise<StudyDatabase> {
  const db = await openDatabase(':memory:');
  cleanups.push(() => db.destroy());
  return db;
}

async function notebook(db: StudyDatabase) {
  const experiments = await db
    .selectFrom('experiments')
    .select(['round', 'delta', 'decision', 'reason', 'evidence', 'accepted_version_id'])
    .orderBy('id')
    .execute();
  const versions = await db.selectFrom('artifact_versions').select(['id', 'text']).orderBy('id').execute();
  return { experiments, versions };
}

class SimulatedCrash extends Error {}

describe('a round resumed after a crash', () => {
  it('never decides past stopping.maxExperiments, and equals the uninterrupted run after a crash at any decision', async () => {
    const study = smallStudy(4); // the first round proposes 6: the limit falls inside it
    const reference = await database();
    await runStudy({ study, notebook: openNotebook(reference) });
    const expected = await notebook(reference);
    expect(expected.experiments.filter((row) => row.decision !== 'skipped')).toHaveLength(4);

    for (let crashAfter = 1; crashAfter <= expected.experiments.length; crashAfter += 1) {
      const db = await database();
      let decisions = 0;
      const crashed = await runStudy({
        study,
        notebook: openNotebook(db),
        onEvent: (event) => {
          if (event.type === 'decision' && ++decisions === crashAfter)
            throw new SimulatedCrash(`crash after decision ${crashAfter}`);
        },
      }).catch((error: unknown) => error);
      expect(crashed).toBeInstanceOf(SimulatedCrash);
      expect((await notebook(db)).experiments).toHaveLength(crashAfter);
      const resumed = await runStudy({ study, notebook: openNotebook(db) });
      expect(resumed.stopReason).toBe('max_experiments');
      expect(await notebook(db), `crash after decision ${crashAfter}`).toEqual(expected);
    }
  }, 120_000);

  it('a stored score equals the fresh one bit for bit (what a resumed run compares)', async () => {
    const study = smallStudy(4);
    const db = await database();
    const stored = createStudyEvaluator(study, openNotebook(db));
    for (const partition of ['optimization', 'anchor', 'shadow'] as const) {
      const fresh = await evaluatePartition(createStudyEvaluator(study), study, study.artifactText, partition);
      const first = await evaluatePartition(stored, study, study.artifactText, partition);
      const loaded = await evaluatePartition(stored, study, study.artifactText, partition);
      expect(loaded.composite).toBe(fresh.composite);
      expect(first.composite).toBe(fresh.composite);
      expect(loaded.components).toEqual(fresh.components);
      expect(loaded.examples.map((record) => record.exampleId)).toEqual(
        fresh.examples.map((record) => record.exampleId),
      );
    }
  });
});
