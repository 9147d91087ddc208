/**
 * External benchmark (`npm run bench:external`): how the reference study's
 * playbooks do on data nobody tuned them for — the Golden UML ModelSet cases
 * in `../shared/data/golden-uml/` (outside the repository: the data's licence
 * allows evaluation use; it is read in place and never copied here).
 *
 * 1. Imports every case with `importGoldenUml` (partial gold: entities and
 *    relations only; no app type, roles or behaviours) and lists the cases
 *    it could not import, with the reason.
 * 2. Takes the seed playbook of examples/intent and its BEST playbook: the
 *    active version of `examples/intent/.kloop/kloop.db` when that study grew
 *    from the current seed and holds a run (a database made by `kloop build`
 *    or `kloop eval` holds none); otherwise it runs the study in a temporary copy
 *    first (always with `--fresh`); if that fails, it falls back to the seed
 *    and says so.
 * 3. Evaluates both with the offline executor and prints per case, and as the
 *    mean over cases, entity recall, entity precision and relation recall,
 *    seed and best side by side.
 * 4. Does the same on the user-story sets of `../shared/data/user-stories/`
 *    (a second external check, read with `importUserStories`; role accuracy
 *    of the story actors is printed too).
 *
 * Neither the playbook nor the corpus is tuned to these cases: this is a
 * measurement, not a target.
 */
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contentHash } from '../src/artifact/content-hash.ts';
import type { IntentExample } from '../src/corpus/intent-example.ts';
import { intentExample } from '../src/corpus/intent-example.ts';
import { intentTask } from '../src/tasks/intent/intent-task.ts';
import { importGoldenUml } from '../src/corpus/importers/golden-uml.ts';
import { createEvaluator } from '../src/evaluator/evaluator.ts';
import type { PartitionScore } from '../src/evaluator/partition-score.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { getRegistryVersion, withArtifactOverride } from '../src/storage/registry.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { runStudy } from '../src/loop/run-study.ts';
import { DEFAULT_WEIGHTS } from '../src/tasks/intent/scorer.ts';
import { createOfflineExecutor } from '../src/tasks/intent/offline/offline-executor.ts';
import { importUserStories } from './user-stories.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const repoRoot = path.resolve(import.meta.dirname, '..');
const dataDir = path.resolve(repoRoot, '..', 'shared', 'data', 'golden-uml');
const storiesDir = path.resolve(repoRoot, '..', 'shared', 'data', 'user-stories');
const studyDir = path.join(repoRoot, 'examples', 'intent');

interface BestArtifact {
  text: string;
  origin: string;
}

/** The best playbook of examples/intent, and where it came from. */
async function bestArtifact(seedText: string): Promise<BestArtifact> {
  const stored = studyDatabasePath(studyDir);
  if (existsSync(stored) && !process.argv.includes('--fresh')) {
    const db = await openDatabase(stored, { readonly: true });
    try {
      const [active, seed] = [await getRegistryVersion(db, 'active'), await getRegistryVersion(db, 'seed')];
      // A database that `kloop build` or `kloop eval` made holds no run: its active version is the seed, not a best playbook.
      const runs = await db
        .selectFrom('runs')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirst();
      const ran = Number(runs?.count ?? 0) > 0;
      if (active !== undefined && seed !== undefined && seed.hash === contentHash(seedText) && ran) {
        return { text: active.text, origin: `active version ${active.id} of ${path.relative(repoRoot, stored)}` };
      }
      console.log(
        `note: ${path.relative(repoRoot, stored)} ${active === undefined ? 'has no active version' : !ran ? 'holds no run' : 'grew from another seed playbook'}; running the study afresh`,
      );
    } finally {
      await db.destroy();
    }
  }
  const copy = mkdtempSync(path.join(tmpdir(), 'kloop-external-bench-'));
  try {
    for (const file of ['kloop.yaml', 'playbook.yaml', 'program.md'])
      copyFileSync(path.join(studyDir, file), path.join(copy, file));
    cpSync(path.join(studyDir, 'corpus'), path.join(copy, 'corpus'), { recursive: true });
    const study = loadStudy(copy);
    const db = await openDatabase(studyDatabasePath(copy));
    try {
      const started = Date.now();
      const outcome = await runStudy({ study, notebook: openNotebook(db) });
      const active = await getRegistryVersion(db, 'active');
      if (active === undefined) throw new Error('the run left no active version');
      return {
        text: active.text,
        origin: `a fresh run of examples/intent in a temporary copy (${outcome.newExperiments} experiments, stopped: ${outcome.stopReason}, ${((Date.now() - started) / 1000).toFixed(0)} s), active version ${active.id}`,
      };
    } finally {
      await db.destroy();
    }
  } catch (error) {
    console.log(`note: could not run the study (${(error as Error).message}); the BEST column is the seed playbook`);
    return { text: seedText, origin: 'the seed playbook (fallback: no best playbook available)' };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

interface CaseMetrics {
  entityRecall: number | null;
  entityPrecision: number | null;
  relationRecall: number | null;
  roleAccuracy: number | null;
}

function perCase(score: PartitionScore): Map<string, CaseMetrics> {
  const result = new Map<string, CaseMetrics>();
  for (const record of score.examples) {
    if (!record.valid)
      result.set(record.exampleId, {
        entityRecall: null,
        entityPrecision: null,
        relationRecall: null,
        roleAccuracy: null,
      });
    else
      result.set(record.exampleId, {
        entityRecall: record.components.entityRecall ?? null,
        entityPrecision: record.metrics.entityPrecision ?? null,
        relationRecall: record.metrics.relationRecall ?? null,
        roleAccuracy: record.components.roleAccuracy ?? null,
      });
  }
  return result;
}

const format = (value: number | null | undefined): string =>
  value === null || value === undefined ? '  —  ' : value.toFixed(3);

function meanOf(values: Array<number | null>): number | null {
  const defined = values.filter((value): value is number => value !== null);
  return defined.length === 0 ? null : defined.reduce((sum, value) => sum + value, 0) / defined.length;
}

function row(cells: string[], widths: number[]): string {
  return cells
    .map((cell, index) => (index === 0 ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!)))
    .join('  ');
}

async function main(): Promise<void> {
  if (!existsSync(dataDir)) {
    console.error(
      `bench:external: the Golden UML cases are not at ${dataDir} (they are read in place, never copied into the repository)`,
    );
    process.exitCode = 1;
    return;
  }
  const imported = importGoldenUml(dataDir);
  const { reports } = imported;
  const examples = imported.examples.map(intentExample);
  const seedText = readFileSync(path.join(studyDir, 'playbook.yaml'), 'utf8');
  const best = await bestArtifact(seedText);
  const executor = createOfflineExecutor();
  const evaluator = createEvaluator({ task: intentTask, executor, corpus: examples, weights: DEFAULT_WEIGHTS });
  const evaluate = (text: string): Promise<PartitionScore> =>
    withArtifactOverride(text, () => evaluator.evaluate({ artifactText: text, partition: 'golden-uml', examples }));
  const seedScores = perCase(await evaluate(seedText));
  const bestScores = perCase(await evaluate(best.text));

  console.log(
    `External benchmark: Golden UML ModelSet (${path.relative(repoRoot, dataDir)}), offline executor ${executor.id}`,
  );
  console.log(
    `seed: examples/intent/playbook.yaml; best: ${best.origin}${best.text === seedText ? ' (identical to the seed)' : ''}`,
  );
  console.log(
    `cases: ${reports.length}, imported: ${examples.length}; partial gold (entities and relations only): app type, roles and behaviours are not scored`,
  );
  for (const report of reports.filter((item) => item.exampleId === undefined))
    console.log(`  not imported: ${report.caseId}: ${report.skipped.join('; ')}`);
  console.log(
    'ER = entity recall, EP = entity precision, RR = relation recall (gold relations with a predicted relation between the same entities)',
  );
  console.log();
  const widths = [28, 5, 5, 8, 8, 8, 8, 8, 8];
  console.log(row(['case', 'ents', 'rels', 'ER seed', 'ER best', 'EP seed', 'EP best', 'RR seed', 'RR best'], widths));
  const byId = new Map<string, IntentExample>(examples.map((example) => [example.id, example]));
  for (const report of reports) {
    if (report.exampleId === undefined) continue;
    const seed = seedScores.get(report.exampleId)!;
    const bestCase = bestScores.get(report.exampleId)!;
    const example = byId.get(report.exampleId)!;
    console.log(
      row(
        [
          report.caseId,
          String(example.expected.entities?.length ?? 0),
          String(example.expected.relations?.length ?? 0),
          format(seed.entityRecall),
          format(bestCase.entityRecall),
          format(seed.entityPrecision),
          format(bestCase.entityPrecision),
          format(seed.relationRecall),
          format(bestCase.relationRecall),
        ],
        widths,
      ),
    );
  }
  const mean = (scores: Map<string, CaseMetrics>, key: keyof CaseMetrics): number | null =>
    meanOf([...scores.values()].map((metrics) => metrics[key]));
  console.log(
    row(
      [
        'mean over cases',
        '',
        '',
        format(mean(seedScores, 'entityRecall')),
        format(mean(bestScores, 'entityRecall')),
        format(mean(seedScores, 'entityPrecision')),
        format(mean(bestScores, 'entityPrecision')),
        format(mean(seedScores, 'relationRecall')),
        format(mean(bestScores, 'relationRecall')),
      ],
      widths,
    ),
  );
  const invalid = [...bestScores.values(), ...seedScores.values()].filter(
    (metrics) => metrics.entityRecall === null,
  ).length;
  if (invalid > 0) console.log(`${invalid} invalid output(s) (no score; not counted in the means)`);

  if (!existsSync(storiesDir)) {
    console.log(`\nuser-story sets: not found at ${path.relative(repoRoot, storiesDir)}; skipped`);
    return;
  }
  const stories = importUserStories(storiesDir);
  for (const skipped of stories.skipped) console.log(`  not imported: ${skipped}`);
  const storyEvaluator = createEvaluator({
    task: intentTask,
    executor,
    corpus: stories.examples,
    weights: DEFAULT_WEIGHTS,
  });
  const evaluateStories = (text: string): Promise<PartitionScore> =>
    withArtifactOverride(text, () =>
      storyEvaluator.evaluate({ artifactText: text, partition: 'user-stories', examples: stories.examples }),
    );
  const seedStories = perCase(await evaluateStories(seedText));
  const bestStories = perCase(await evaluateStories(best.text));
  console.log();
  console.log(
    `Second check: user-story sets (${path.relative(repoRoot, storiesDir)}), ${stories.examples.length} sets, each one goal text; RA = role accuracy of the story actors (party)`,
  );
  const storyWidths = [28, 5, 5, 8, 8, 8, 8, 8, 8, 8, 8];
  console.log(
    row(
      ['set', 'ents', 'rels', 'ER seed', 'ER best', 'EP seed', 'EP best', 'RR seed', 'RR best', 'RA seed', 'RA best'],
      storyWidths,
    ),
  );
  for (const example of stories.examples) {
    const seed = seedStories.get(example.id)!;
    const bestCase = bestStories.get(example.id)!;
    console.log(
      row(
        [
          example.id,
          String(example.expected.entities?.length ?? 0),
          String(example.expected.relations?.length ?? 0),
          format(seed.entityRecall),
          format(bestCase.entityRecall),
          format(seed.entityPrecision),
          format(bestCase.entityPrecision),
          format(seed.relationRecall),
          format(bestCase.relationRecall),
          format(seed.roleAccuracy),
          format(bestCase.roleAccuracy),
        ],
        storyWidths,
      ),
    );
  }
  console.log(
    row(
      [
        'mean over sets',
        '',
        '',
        format(mean(seedStories, 'entityRecall')),
        format(mean(bestStories, 'entityRecall')),
        format(mean(seedStories, 'entityPrecision')),
        format(mean(bestStories, 'entityPrecision')),
        format(mean(seedStories, 'relationRecall')),
        format(mean(bestStories, 'relationRecall')),
        format(mean(seedStories, 'roleAccuracy')),
        format(mean(bestStories, 'roleAccuracy')),
      ],
      storyWidths,
    ),
  );
}

await main();
