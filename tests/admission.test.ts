/**
 * Corpus admission through the CLI (`kloop corpus add`), the importers CLI
 * (`kloop corpus import`) and partial gold through `kloop eval --corpus`, on a
 * small copy of the reference study.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Example } from '../src/corpus/example.ts';
import type { IntentExampleRecord } from '../src/corpus/intent-example.ts';
import { intentExample } from '../src/corpus/intent-example.ts';
import { intentTask } from '../src/tasks/intent/intent-task.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { createEvaluator } from '../src/evaluator/evaluator.ts';
import { comparePaired, decide } from '../src/gate/gate.ts';
import { ablateArtifact } from '../src/calibration/calibration.ts';
import { kloop, makeSmallStudy, referenceCorpus } from './small-intent-study.ts';

let study: ReturnType<typeof makeSmallStudy>;
let newcomer: IntentExampleRecord;
let existing: IntentExampleRecord;

beforeAll(() => {
  study = makeSmallStudy({ optimization: 12, anchor: 3, shadow: 6, config: ['stopping: { maxExperiments: 4 }'] });
  newcomer = referenceCorpus().shadow[10]!;
  existing = study.examples[0]!;
});
afterAll(() => study.cleanup());
afterEach(() => {
  process.exitCode = undefined;
});

describe('kloop corpus add', () => {
  let db: StudyDatabase | undefined;
  afterAll(async () => db?.destroy());

  it('admits the valid example into shadow and refuses a near-duplicate, an ungrounded entity and a schema error, with reasons', async () => {
    const nearDuplicate: IntentExampleRecord = {
      ...existing,
      id: 'near-duplicate-01',
      goal: `${existing.goal} Thanks!`,
    };
    const ungrounded: IntentExampleRecord = {
      ...newcomer,
      id: 'ungrounded-01',
      goal: 'Volunteers of our repair café log every broken toaster they fix and the parts they used, so we can report on waste saved each month.',
      expected: {
        appType: 'inventory',
        entities: [
          { name: 'Volunteer', role: 'party' },
          { name: 'Zeppelin', role: 'resource' },
        ],
      },
    };
    const schemaError = {
      ...newcomer,
      id: 'schema-error-01',
      goal: 'Parents of our scout group pay the yearly fee online and see the camp calendar.',
      expected: { appType: 'membership', entities: [{ name: 'Parent', role: 'customer' }] },
    };
    const batch = path.join(study.dir, 'batch.jsonl');
    writeFileSync(
      batch,
      `${[newcomer, nearDuplicate, ungrounded, schemaError].map((record) => JSON.stringify(record)).join('\n')}\n`,
    );

    const dry = await kloop('corpus', 'add', study.dir, batch, '--json', '--dry-run');
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, admitted: 1, refused: 3 });

    const { code, stdout } = await kloop('corpus', 'add', study.dir, batch, '--json');
    expect(code).toBe(4); // one admitted, three refused: a partial admission, never the "nothing written" code 2
    const report = JSON.parse(stdout) as {
      admitted: number;
      refused: number;
      verdicts: Array<{
        id: string;
        line: number;
        admitted: boolean;
        reasons: Array<{ check: string; field?: string; message: string }>;
      }>;
    };
    expect(report).toMatchObject({ admitted: 1, refused: 3 });
    const byId = new Map(report.verdicts.map((verdict) => [verdict.id, verdict]));
    expect(byId.get(newcomer.id)).toMatchObject({ admitted: true, reasons: [] });
    expect(byId.get('near-duplicate-01')!.reasons).toEqual([
      expect.objectContaining({ check: 'near_duplicate', relatedId: existing.id }),
    ]);
    expect(byId.get('ungrounded-01')!.reasons).toEqual([
      expect.objectContaining({
        check: 'grounding',
        field: 'expected.entities[1].name',
        message: expect.stringContaining('Zeppelin'),
      }),
    ]);
    expect(byId.get('schema-error-01')!.reasons).toEqual([
      expect.objectContaining({ check: 'schema', field: 'expected.entities[0].role' }),
    ]);
    expect(byId.get('schema-error-01')!.line).toBe(4);

    db = await openDatabase(studyDatabasePath(study.dir));
    const admitted = await db.selectFrom('corpus_members').selectAll().where('origin', '=', 'admitted').execute();
    expect(admitted.map((row) => [row.example_id, row.partition, row.shadow_exposures])).toEqual([
      [newcomer.id, 'shadow', 0],
    ]);
    // Stored task-agnostic: the goal is the input and the text.
    expect(JSON.parse(admitted[0]!.example!)).toMatchObject({
      id: newcomer.id,
      input: newcomer.goal,
      text: newcomer.goal,
      partition: 'shadow',
    });
    const events = await db
      .selectFrom('corpus_events')
      .select(['example_id', 'kind', 'to_partition', 'reason'])
      .where('kind', 'in', ['admitted', 'refused'])
      .orderBy('id')
      .execute();
    expect(events.map((event) => [event.example_id, event.kind, event.to_partition])).toEqual([
      [newcomer.id, 'admitted', 'shadow'],
      ['near-duplicate-01', 'refused', null],
      ['ungrounded-01', 'refused', null],
      ['schema-error-01', 'refused', null],
    ]);
    expect(events[2]!.reason).toMatch(/^grounding: gold entity "Zeppelin"/);
    // The corpus file is left as the user wrote it; the loaded study has the admitted example in shadow.
    expect(readFileSync(path.join(study.dir, 'corpus', 'small.jsonl'), 'utf8')).not.toContain(newcomer.id);
    const loaded = loadStudy(study.dir);
    expect(loaded.partitions.shadow.map((example) => example.id)).toContain(newcomer.id);
    expect(loaded.partitions.optimization.map((example) => example.id)).not.toContain(newcomer.id);
  });

  it('refuses the same id twice, and shows the admitted example in `corpus status`', async () => {
    const again = path.join(study.dir, 'again.jsonl');
    writeFileSync(
      again,
      `${JSON.stringify({ ...newcomer, goal: 'A different text about a garden club where members rent plots.' })}\n`,
    );
    const { code, stdout } = await kloop('corpus', 'add', study.dir, again, '--json');
    expect(code).toBe(4); // every record refused: listed and recorded, still not the bad-input code
    expect(JSON.parse(stdout).verdicts[0].reasons[0]).toMatchObject({ check: 'duplicate_id' });
    const status = JSON.parse((await kloop('corpus', 'status', study.dir, '--json')).stdout) as {
      sizes: Record<string, number>;
      members: Array<{ id: string; partition: string; origin: string }>;
    };
    expect(status.sizes).toMatchObject({ optimization: 12, anchor: 3, shadow: 7 });
    expect(status.members.find((member) => member.id === newcomer.id)).toMatchObject({
      partition: 'shadow',
      origin: 'admitted',
    });
  });
});

describe('kloop corpus import and kloop eval --corpus (partial gold)', () => {
  it('imports Golden UML case folders, reporting per case what could not be read, and writes JSONL atomically', async () => {
    const source = path.join(study.dir, 'uml');
    mkdirSync(path.join(source, 'Library'), { recursive: true });
    writeFileSync(
      path.join(source, 'Library', 'description.md'),
      'The library lends books to members. Each loan records the book, the member and a due date.\n',
    );
    writeFileSync(
      path.join(source, 'Library', 'plantuml.txt'),
      '@startuml\nclass Member\nclass Book\nclass Loan\nMember "1" -- "*" Loan\nLoan "*" -- "1" Book\nthis line is not uml\n@enduml\n',
    );
    writeFileSync(path.join(source, 'Library', 'metadata.txt'), 'Domain: Education\n');
    mkdirSync(path.join(source, 'Empty'));
    const out = path.join(study.dir, 'imported.jsonl');
    const { code, stdout } = await kloop('corpus', 'import', '--format', 'golden-uml', source, '--out', out, '--json');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as {
      examples: number;
      cases: Array<{ case: string; exampleId?: string; skipped: string[] }>;
    };
    expect(report.examples).toBe(1);
    expect(report.cases.find((entry) => entry.case === 'Empty')).toMatchObject({
      skipped: expect.arrayContaining([expect.stringContaining('plantuml.txt missing')]),
    });
    expect(report.cases.find((entry) => entry.case === 'Library')).toMatchObject({ exampleId: 'golden-uml:Library' });
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      id: 'golden-uml:Library',
      partition: 'shadow',
      expected: { entities: expect.any(Array) },
    });
  });

  it('imports a JSONL file, reporting the records it could not read by line and field', async () => {
    const source = path.join(study.dir, 'mixed.jsonl');
    writeFileSync(
      source,
      `${JSON.stringify(existing)}\n${JSON.stringify({ ...existing, id: 'bad', colour: 'blue' })}\n`,
    );
    const out = path.join(study.dir, 'mixed-out.jsonl');
    const report = JSON.parse(
      (await kloop('corpus', 'import', '--format', 'jsonl', source, '--out', out, '--json')).stdout,
    ) as { examples: number; cases: Array<{ case: string; skipped: string[] }> };
    expect(report.examples).toBe(1);
    expect(report.cases[1]).toMatchObject({ case: `${source}:2`, skipped: ['colour: unknown field "colour"'] });
  });

  it('evaluates the study artifact on a partial-gold file and says which components were scored', async () => {
    const { code, stdout } = await kloop(
      'eval',
      study.dir,
      '--corpus',
      path.join(study.dir, 'imported.jsonl'),
      '--json',
    );
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as {
      examples: number;
      scoredOn: Record<string, number>;
      skippedOn: Record<string, number>;
      perExample: Array<{
        scored: string[];
        skipped: string[];
        metrics: { entityPrecision: number | null; relationRecall: number | null };
      }>;
    };
    expect(report.examples).toBe(1);
    expect(report.scoredOn).toEqual({ appType: 0, entityRecall: 1, roleAccuracy: 0, behaviorCoverage: 0 });
    expect(report.skippedOn).toEqual({ appType: 1, entityRecall: 0, roleAccuracy: 1, behaviorCoverage: 1 });
    expect(report.perExample[0]).toMatchObject({
      scored: ['entityRecall'],
      skipped: ['appType', 'roleAccuracy', 'behaviorCoverage'],
    });
    expect(report.perExample[0]!.metrics.relationRecall).not.toBeUndefined();
  });

  it('lets the gate decide on a shadow partition of partial gold (no app type, roles or behaviours)', async () => {
    const loaded = loadStudy(study.dir);
    const partial: Example[] = [
      intentExample({
        id: 'partial-01',
        goal: 'The library lends books to members; each loan has a due date and members pay a fine when late.',
        expected: {
          entities: [{ name: 'Book' }, { name: 'Member' }, { name: 'Loan' }],
          relations: [{ from: 'Member', to: 'Loan' }],
        },
        tags: [],
        partition: 'shadow',
      }),
      intentExample({
        id: 'partial-02',
        goal: 'Volunteers sort donated clothes into boxes and drivers deliver the boxes to shelters.',
        expected: { entities: [{ name: 'Volunteer' }, { name: 'Box' }, { name: 'Shelter' }, { name: 'Driver' }] },
        tags: [],
        partition: 'shadow',
      }),
    ];
    const evaluator = createEvaluator({
      task: intentTask,
      executor: loaded.executor,
      corpus: [...loaded.corpus, ...partial],
    });
    const score = (text: string, examples: readonly Example[], partition: string) =>
      evaluator.evaluate({ artifactText: text, partition, examples });
    // The seed against an ablated playbook (no cues, no terms): a real gain, so the gate reaches the shadow check.
    const incumbent = ablateArtifact(loaded.artifactText);
    const candidate = loaded.artifactText;
    const pair = async (examples: readonly Example[], partition: string) => ({
      incumbent: await score(incumbent, examples, partition),
      candidate: await score(candidate, examples, partition),
    });
    const decision = await decide({
      constraints: { passed: true, violations: [] },
      optimization: await pair(loaded.partitions.optimization, 'optimization'),
      anchor: await pair(loaded.partitions.anchor, 'anchor'),
      evaluateShadow: () => pair(partial, 'shadow'),
    });
    expect(decision.shadowConsulted).toBe(true);
    const shadowCheck = decision.checks.find((check) => check.name === 'shadow')!;
    expect(shadowCheck.data).toMatchObject({ examples: 2, leftOut: 0 });
    const shadow = await score(candidate, partial, 'shadow');
    expect(shadow.invalid).toBe(0);
    expect(
      shadow.examples.every(
        (record) =>
          record.valid &&
          record.skipped.includes('appType') &&
          record.skipped.includes('roleAccuracy') &&
          record.skipped.includes('behaviorCoverage'),
      ),
    ).toBe(true);
    expect(shadow.components.entityRecall).toBeTypeOf('number');
    expect(comparePaired(shadow, shadow).ids).toEqual(['partial-01', 'partial-02']);
  });
});
