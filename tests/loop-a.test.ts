/**
 * Loop A end to end: the evaluator on the reference corpus, a run that sends
 * what passes its gate to the review queue (and activates nothing), approval
 * through the registry and the patterns folder, and the CLI (`eval --loop A`,
 * `run --loop A`, `review`).
 */
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { kloop } from './cli-in-process.ts';
import { loopAScore } from '../src/assembly/gates.ts';
import type { Example } from '../src/corpus/example.ts';
import type { Candidate, Proposer } from '../src/proposers/proposer.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { getRegistryVersion } from '../src/storage/registry.ts';
import type { LoadedStudy } from '../src/loop/loaded-study.ts';
import { loadStudy, splitPartitions } from '../src/study/load-study.ts';
import { evaluateLoopA, runLoopA, type LoopAExampleResult } from '../src/loop-a/loop-a.ts';
import { approveReviewItem, enqueueReviewItem, listReviewItems } from '../src/review/review-queue.ts';
import type { Executor } from '../src/executors/executor.ts';
import type { Intent } from '../src/tasks/intent/intent.ts';
import { loadStudyPatternLibrary } from '../src/runtime/runtime.ts';

const EXAMPLE_STUDY = path.resolve(import.meta.dirname, '../examples/intent');
const RELATE = '\n# relate kennels to bookings\n';

function copyExampleStudy(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-loop-a-'));
  for (const name of ['kloop.yaml', 'playbook.yaml', 'program.md', 'corpus'])
    cpSync(path.join(EXAMPLE_STUDY, name), path.join(dir, name), { recursive: true });
  return dir;
}

let reference: LoadedStudy;
beforeAll(() => {
  reference = loadStudy(EXAMPLE_STUDY);
});

describe('evaluateLoopA on the reference corpus', () => {
  let db: StudyDatabase;
  beforeEach(async () => {
    db = await openDatabase(':memory:');
  });
  afterEach(async () => db.destroy());

  it('scores every example with the documented composite, through an override that writes nothing', async () => {
    const evaluation = await evaluateLoopA({ study: reference, db, artifactText: reference.artifactText });
    expect(evaluation.examples).toBe(reference.corpus.length);
    const valid = evaluation.results.filter(
      (result): result is Extract<LoopAExampleResult, { valid: true }> => result.valid,
    );
    expect(evaluation.composite).toBeCloseTo(loopAScore(valid).score!, 12);
    expect(evaluation.compileSuccessRate).toBe(1);
    for (const [name, count] of Object.entries(evaluation.gateFailures)) {
      expect(count).toBe(valid.filter((result) => result.failedGates.includes(name as never)).length);
    }
    expect(Object.keys(evaluation.partitions).sort()).toEqual(['anchor', 'optimization', 'shadow']);
    expect(await getRegistryVersion(db)).toBeUndefined();
    expect(await db.selectFrom('signals').selectAll().execute()).toEqual([]);
  });

  it('counts invalid intents as invalid and leaves them out of the composite', async () => {
    const badIds = new Set(reference.corpus.slice(0, 5).map((example) => example.text));
    const executor: Executor = {
      id: 'half-broken',
      deterministic: true,
      execute: async (request) =>
        badIds.has(request.text)
          ? { ok: false, reason: 'timeout', message: 'too slow' }
          : reference.executor.execute(request),
    };
    const evaluation = await evaluateLoopA({ study: reference, db, artifactText: reference.artifactText, executor });
    expect(evaluation).toMatchObject({ invalid: 5, valid: reference.corpus.length - 5 });
    expect(
      evaluation.results
        .filter((result) => !result.valid)
        .every((result) => !result.valid && result.invalidReason === 'timeout'),
    ).toBe(true);
  });
});

/** A study where kennels recur uncovered: a pattern, or a playbook edit that relates them, fixes the orphan tables. */
function kennelStudy(dir: string): LoadedStudy {
  const gold = {
    appType: 'booking' as const,
    entities: [
      { name: 'Customer', role: 'party' as const },
      { name: 'Booking', role: 'commitment' as const },
      { name: 'Kennel', role: 'reference' as const },
    ],
    behaviors: ['scheduling' as const],
  };
  const examples: Example[] = [
    'optimization',
    'optimization',
    'optimization',
    'anchor',
    'anchor',
    'shadow',
    'shadow',
  ].map((partition, index) => ({
    id: `kennel-${index}`,
    input: `Dog owners book a kennel for their dog, case ${index}.`,
    text: `Dog owners book a kennel for their dog, case ${index}.`,
    expected: gold,
    tags: [],
    partition: partition as Example['partition'],
  }));
  const executor: Executor = {
    id: 'kennel@test',
    deterministic: true,
    execute: async (request) => {
      const intent: Intent = {
        appType: 'booking',
        entities: gold.entities,
        relations: [
          { from: 'Customer', to: 'Booking', cardinality: 'one_to_many' },
          ...(request.artifact.includes(RELATE)
            ? [{ from: 'Booking', to: 'Kennel', cardinality: 'many_to_one' as const }]
            : []),
        ],
        behaviors: ['scheduling'],
        projections: ['list'],
      };
      return { ok: true, output: intent };
    },
  };
  const proposer: Proposer = {
    id: 'kennel-proposer@test',
    propose: async (context) => {
      const candidate: Candidate = {
        text: `${context.incumbentText}${RELATE}`,
        delta: 'relate kennels to bookings',
        rationale: 'kennel tables are orphans',
      };
      return { candidates: context.incumbentText.includes(RELATE) ? [] : [candidate], failures: [] };
    },
  };
  return {
    ...reference,
    dir,
    corpus: examples,
    partitions: splitPartitions(examples),
    executor,
    proposer,
    constraints: { ...reference.constraints, check: () => ({ passed: true, violations: [] }) },
  };
}

describe('runLoopA', () => {
  let dir: string;
  let db: StudyDatabase;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'kloop-kennel-'));
    db = await openDatabase(':memory:');
  });
  afterEach(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an abort that surfaces as an error mid-evaluation records the run as interrupted, not failed', async () => {
    const study = kennelStudy(dir);
    const controller = new AbortController();
    // Aborted as the run starts: the incumbent's evaluation then stops on the signal and throws it.
    const run = runLoopA({
      study,
      db,
      signal: controller.signal,
      onEvent: (event) => (event.type === 'start' ? controller.abort(new Error('interrupted')) : undefined),
    });
    await expect(run).rejects.toThrow('interrupted');
    const row = await db.selectFrom('loop_a_runs').selectAll().executeTakeFirstOrThrow();
    expect(row.status).toBe('interrupted');
    expect(JSON.parse(row.report!)).toEqual({ interrupted: 'interrupted' });
  });

  it('sends what passes its gate to the review queue, activates nothing, and records its run and decisions', async () => {
    const study = kennelStudy(dir);
    const outcome = await runLoopA({ study, db });
    expect(outcome.incumbent.gateFailures['no-orphan-tables']).toBe(7);
    expect(outcome.candidates.map((candidate) => [candidate.kind, candidate.decision])).toEqual([
      ['artifact', 'queued'],
      ['pattern', 'queued'],
    ]);
    const seed = await getRegistryVersion(db);
    expect(seed?.text).toBe(study.artifactText);
    const items = await listReviewItems(db);
    expect(items.map((item) => [item.kind, item.source, item.runId])).toEqual([
      ['artifact', 'loop-a', outcome.runId],
      ['pattern', 'loop-a', outcome.runId],
    ]);
    expect(items[0]!.evidence).toMatchObject({
      loopA: { compositeDelta: expect.any(Number) },
      loopBAnchors: { incumbent: expect.any(Number) },
    });
    const run = await db.selectFrom('loop_a_runs').selectAll().executeTakeFirstOrThrow();
    expect(run.status).toBe('done');
    const decisions = await db.selectFrom('loop_a_decisions').selectAll().orderBy('id').execute();
    expect(decisions.map((row) => [row.decision, row.review_item_id])).toEqual([
      ['queued', items[0]!.id],
      ['queued', items[1]!.id],
    ]);

    // A second run decides nothing twice.
    const again = await runLoopA({ study, db });
    expect(again.candidates.map((candidate) => [candidate.kind, candidate.decision, candidate.reason])).toEqual([
      ['artifact', 'skipped', 'duplicate'],
      ['pattern', 'skipped', 'duplicate'],
    ]);
    expect(await listReviewItems(db)).toHaveLength(2);

    // Approval is what activates: the registry pointer moves, the pattern lands in patterns/.
    await approveReviewItem(db, items[0]!.id, { by: 'ana', studyDir: dir });
    expect((await getRegistryVersion(db))?.text).toContain(RELATE);
    await approveReviewItem(db, items[1]!.id, { by: 'ana', studyDir: dir });
    expect(existsSync(path.join(dir, 'patterns', 'mined-booking.yaml'))).toBe(true);
    expect(loadStudyPatternLibrary(dir).patterns.map((pattern) => pattern.id)).toContain('mined-booking');
    const after = await evaluateLoopA({ study, db, artifactText: (await getRegistryVersion(db))!.text });
    expect(after.allGatesPassedRate).toBe(1);
    expect(after.composite).toBeGreaterThan(outcome.incumbent.composite!);
  });
});

describe('the CLI: eval --loop A, run --loop A, review', () => {
  let dir: string;
  beforeAll(() => {
    dir = copyExampleStudy();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('kloop eval --loop A prints the Loop A figures', async () => {
    const { code, stdout } = await kloop('eval', dir, '--loop', 'A', '--json');
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as Record<string, unknown> & {
      examples: Array<Record<string, unknown>>;
      gateFailures: Record<string, number>;
    };
    expect(json).toMatchObject({ loop: 'A', partition: 'all', invalid: 0, compileSuccessRate: 1 });
    expect(typeof json.composite).toBe('number');
    expect(typeof json.meanGatePassRate).toBe('number');
    expect(typeof json.allGatesPassedRate).toBe('number');
    expect(Object.keys(json.gateFailures)).toContain('sql-builds');
    expect(json.examples).toHaveLength(reference.corpus.length);
    const text = await kloop('eval', dir, '--loop', 'a', '--partition', 'anchor');
    expect(text.stdout).toMatch(/Loop A \(end-to-end\)/);
    expect(text.stdout).toMatch(/failures per gate:/);
    expect((await kloop('eval', dir, '--loop', 'C')).code).toBe(2);
    // An artifact that gives no valid intent: no score, exit 1, as plain eval (it exited 0).
    const broken = path.join(dir, 'broken-playbook.yaml');
    writeFileSync(broken, 'foo: 1\n');
    const nothing = await kloop('eval', dir, '--loop', 'A', '--artifact', broken, '--json', '--partition', 'anchor');
    expect(nothing.code, nothing.stderr).toBe(1);
    expect(nothing.stderr).toMatch(
      /^kloop: nothing valid came back: (\d+) of \1 intents are invalid \(.+\); there is no composite \(exit 1\)$/m,
    );
    expect(JSON.parse(nothing.stdout)).toMatchObject({ valid: 0, composite: null });
  });

  it('kloop run --loop A decides candidates without moving the registry', async () => {
    const { code, stdout } = await kloop('run', dir, '--loop', 'A', '--json', '--quiet');
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as {
      loop: string;
      runId: number;
      candidates: unknown[];
      incumbentVersionId: number;
    };
    expect(json.loop).toBe('A');
    const db = await openDatabase(studyDatabasePath(dir));
    try {
      expect((await getRegistryVersion(db))?.id).toBe(json.incumbentVersionId);
      expect(await db.selectFrom('loop_a_decisions').selectAll().execute()).toHaveLength(json.candidates.length);
      expect((await db.selectFrom('leases').selectAll().execute()).length).toBe(0);
    } finally {
      await db.destroy();
    }
  }, 180_000);

  it('kloop review lists, approves (moving the active pointer) and rejects (not moving it), with who', async () => {
    let db = await openDatabase(studyDatabasePath(dir));
    const before = (await getRegistryVersion(db))!;
    // What `kloop run --loop A` queued above (the seed leaves entities unconnected, so Loop A has edits to propose).
    const queued = (await listReviewItems(db)).map((item) => item.id);
    const first = await enqueueReviewItem(db, {
      kind: 'artifact',
      source: 'loop-a',
      title: 'edit one',
      payload: { text: `${before.text}\n# edit one\n`, delta: 'edit one' },
      evidence: { checks: [{ name: 'improvement', passed: true, detail: 'composite rises' }] },
    });
    const second = await enqueueReviewItem(db, {
      kind: 'artifact',
      source: 'loop-a',
      title: 'edit two',
      payload: { text: `${before.text}\n# edit two\n`, delta: 'edit two' },
    });
    await db.destroy();

    const listed = await kloop('review', dir, '--json');
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { items: Array<{ id: number }> }).items.map((item) => item.id)).toEqual([
      ...queued,
      first.item.id,
      second.item.id,
    ]);
    const text = await kloop('review', dir);
    expect(text.stdout).toMatch(/composite rises/);

    expect((await kloop('review', dir, 'approve', String(first.item.id))).code).toBe(2);
    const rejected = await kloop('review', dir, 'reject', String(second.item.id), '--by', 'bo', '--json');
    expect(rejected.code).toBe(0);
    db = await openDatabase(studyDatabasePath(dir));
    expect((await getRegistryVersion(db))?.id).toBe(before.id);
    await db.destroy();

    const approved = await kloop('review', dir, 'approve', String(first.item.id), '--by', 'ana', '--note', 'checked');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/approved by ana/);
    db = await openDatabase(studyDatabasePath(dir));
    try {
      const active = (await getRegistryVersion(db))!;
      expect(active.id).not.toBe(before.id);
      expect(active.text).toContain('# edit one');
      const event = await db.selectFrom('registry_events').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
      expect(event.reason).toBe(`review item ${first.item.id} approved by ana`);
      const rows = await db
        .selectFrom('review_items')
        .select(['id', 'status', 'decided_by', 'note'])
        .where('id', 'in', [first.item.id, second.item.id])
        .orderBy('id')
        .execute();
      expect(rows).toEqual([
        { id: first.item.id, status: 'approved', decided_by: 'ana', note: 'checked' },
        { id: second.item.id, status: 'rejected', decided_by: 'bo', note: null },
      ]);
    } finally {
      await db.destroy();
    }
    expect((await kloop('review', dir, 'approve', String(first.item.id), '--by', 'ana')).code).toBe(1);
  });
});
