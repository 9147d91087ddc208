/**
 * Records placed in a corpus file pass the same admission gate as `kloop
 * corpus add` (issue 19, item 1) and no goal leaks between partitions (issue
 * 18, item 6): every run prints, before round 1, what was admitted where and
 * why, and what was refused with file:line and reason; refused records are
 * left out; a goal in two partitions is an error (at load, for every command)
 * or a refusal (`kloop corpus add`), naming both records by file:line.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IntentExampleRecord } from '../src/corpus/intent-example.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { loadStudy } from '../src/study/load-study.ts';
import { kloop, makeSmallStudy, referenceCorpus } from './small-intent-study.ts';

const CORPUS = 'corpus/small.jsonl';
let study: ReturnType<typeof makeSmallStudy>;
const corpusFile = (): string => path.join(study.dir, CORPUS);
const lineCount = (): number => readFileSync(corpusFile(), 'utf8').trimEnd().split('\n').length;
const append = (...records: IntentExampleRecord[]): void =>
  appendFileSync(corpusFile(), records.map((record) => `${JSON.stringify(record)}\n`).join(''));

async function events(kind: string): Promise<Array<{ example_id: string | null; reason: string; details: string }>> {
  const db = await openDatabase(studyDatabasePath(study.dir), { readonly: true });
  try {
    return await db
      .selectFrom('corpus_events')
      .select(['example_id', 'reason', 'details'])
      .where('kind', '=', kind)
      .orderBy('id')
      .execute();
  } finally {
    await db.destroy();
  }
}

beforeAll(() => {
  study = makeSmallStudy({ optimization: 6, anchor: 3, shadow: 6, config: ['stopping: { maxExperiments: 0 }'] });
});
afterAll(() => study.cleanup());

describe('corpus-file records new to a study', () => {
  const reference = referenceCorpus();
  let twinRecord: IntentExampleRecord;

  it('on the first run: a goal written into two partitions is an error naming both records by file:line, for every command that loads the study', async () => {
    const first = study.examples[0]!; // optimization, line 1
    twinRecord = { ...first, id: 'twin-of-first', partition: 'shadow' };
    const ungrounded: IntentExampleRecord = {
      ...reference.shadow[7]!,
      id: 'ungrounded-file-01',
      expected: {
        ...reference.shadow[7]!.expected,
        entities: [...(reference.shadow[7]!.expected.entities ?? []), { name: 'Zeppelin', role: 'resource' }],
      },
    };
    append(twinRecord, ungrounded);
    const twinLine = lineCount() - 1;
    const both = `${CORPUS}:1 "${first.id}" (optimization) and ${CORPUS}:${twinLine} "twin-of-first" (shadow) have the same goal text`;

    expect(() => loadStudy(study.dir)).toThrow(
      expect.objectContaining({ code: 'partition_leak', message: expect.stringContaining(both) }),
    );
    for (const command of [
      ['run', study.dir],
      ['eval', study.dir, '--quiet'],
    ]) {
      const { code, stderr } = await kloop(...command);
      expect(code, command.join(' ')).toBe(2);
      expect(stderr).toContain(both);
    }
    expect(existsSync(studyDatabasePath(study.dir))).toBe(false); // refused before anything was written
    // `corpus status` still loads the study, to list the pair.
    const status = JSON.parse((await kloop('corpus', 'status', study.dir, '--json')).stdout) as {
      leaks: Array<{ first: { id: string; location: string }; second: { id: string; location: string } }>;
    };
    expect(status.leaks).toEqual([
      {
        first: { id: first.id, partition: 'optimization', location: `${CORPUS}:1` },
        second: { id: 'twin-of-first', partition: 'shadow', location: `${CORPUS}:${twinLine}` },
        distance: 0,
      },
    ]);

    // The same goal twice in one partition is no leak: the later record is refused as a near-duplicate and left out.
    const firstShadow = study.examples[9]!; // shadow, line 10
    twinRecord = { ...firstShadow, id: 'twin-of-first', partition: 'shadow' };
    writeFileSync(
      corpusFile(),
      readFileSync(corpusFile(), 'utf8').replace(/^.*"twin-of-first".*$/m, JSON.stringify(twinRecord)),
    );
    const loaded = loadStudy(study.dir);
    expect(loaded.corpus.map((example) => example.id)).not.toContain('twin-of-first');
    expect(loaded.corpus.map((example) => example.id)).not.toContain('ungrounded-file-01');
    expect(loaded.partitions.shadow).toHaveLength(6);

    const { code, stderr } = await kloop('run', study.dir, '--json');
    expect(code).toBe(0);
    expect(stderr).toContain(
      'corpus: 17 record(s) new to the study in the corpus files (its first run): 15 admitted, 2 refused',
    );
    expect(stderr).toMatch(/6 → optimization \(as their file says, on the study's first run; corpus\/small\.jsonl\)/);
    // The refused duplicate names both records, each by file:line.
    const twin = stderr
      .split('\n')
      .find((line) => line.includes(`${CORPUS}:${twinLine} twin-of-first: near_duplicate`))!;
    expect(twin).toContain(`is the same text as "${firstShadow.id}" (${CORPUS}:10, shadow`);
    expect(twin).not.toContain('would leak');
    expect(stderr).toContain(`${CORPUS}:${twinLine + 1} ungrounded-file-01: grounding expected.entities[`);
    const refused = await events('refused');
    expect(refused.map((event) => event.example_id)).toEqual(['twin-of-first', 'ungrounded-file-01']);
    expect(JSON.parse(refused[0]!.details)).toMatchObject({
      origin: 'file',
      source: CORPUS,
      line: twinLine,
      reasons: [
        {
          check: 'near_duplicate',
          relatedId: firstShadow.id,
          relatedLocation: `${CORPUS}:10`,
          relatedPartition: 'shadow',
        },
      ],
    });
  });

  it('records a refusal once, however many runs see the same record, and `corpus status` lists it', async () => {
    const { stderr } = await kloop('run', study.dir);
    expect(stderr).toContain('corpus: 2 record(s) new to the study in the corpus files: 0 admitted, 2 refused');
    expect(await events('refused')).toHaveLength(2);
    const status = JSON.parse((await kloop('corpus', 'status', study.dir, '--json')).stdout) as {
      refused: Array<{ id: string; location: string }>;
    };
    expect(status.refused.map((record) => record.id)).toEqual(['twin-of-first', 'ungrounded-file-01']);
  });

  it('after the study began: new records enter shadow first with a printed reason, whatever their file says', async () => {
    const fresh = reference.shadow.slice(8, 11).map((example) => ({ ...example, partition: 'optimization' as const }));
    append(...fresh);
    const { stderr } = await kloop('run', study.dir);
    expect(stderr).toContain('corpus: 5 record(s) new to the study in the corpus files: 3 admitted, 2 refused');
    expect(stderr).toContain(
      `3 → shadow (new after the study began: shadow first; ${CORPUS}): ${fresh.map((example) => example.id).join(', ')}`,
    );
    expect(stderr).toContain(
      '3 of them asked for another partition in their file: records added after the study began enter shadow first',
    );
    const shadow = await events('shadow');
    expect(shadow.map((event) => event.example_id)).toEqual(fresh.map((example) => example.id));
    expect(loadStudy(study.dir).partitions.shadow).toHaveLength(9);
  });

  it('refuses to run when an example already in the study is edited into a twin of another partition, naming both', async () => {
    const text = readFileSync(corpusFile(), 'utf8');
    const lines = text.trimEnd().split('\n');
    const anchor = JSON.parse(lines[6]!) as IntentExampleRecord; // line 7: the first anchor
    const edited = lines.map((line, index) =>
      index === 1 ? JSON.stringify({ ...(JSON.parse(line) as IntentExampleRecord), goal: anchor.goal }) : line,
    );
    writeFileSync(corpusFile(), `${edited.join('\n')}\n`);
    try {
      const { code, stderr } = await kloop('run', study.dir);
      expect(code).toBe(2);
      expect(stderr).toContain(
        `${CORPUS}:2 "${study.examples[1]!.id}" (optimization) and ${CORPUS}:7 "${anchor.id}" (anchor) have the same goal text`,
      );
      const status = JSON.parse((await kloop('corpus', 'status', study.dir, '--json')).stdout) as { leaks: unknown[] };
      expect(status.leaks).toHaveLength(1);
    } finally {
      writeFileSync(corpusFile(), text);
    }
  });

  it('`kloop corpus add` refuses a cross-partition duplicate goal with both file:line locations', async () => {
    const batch = path.join(study.dir, 'batch.jsonl');
    const target = study.examples[2]!; // optimization, line 3
    writeFileSync(
      batch,
      `${JSON.stringify(reference.shadow[12])}\n${JSON.stringify({ ...target, id: 'copy-of-third', partition: 'shadow' })}\n`,
    );
    const { code, stdout } = await kloop('corpus', 'add', study.dir, batch);
    expect(code).toBe(4); // partial admission: one admitted, one refused
    expect(stdout).toContain(`ADMITTED ${reference.shadow[12]!.id} (batch.jsonl:1)`);
    expect(loadStudy(study.dir).partitions.shadow.map((example) => example.id)).toContain(reference.shadow[12]!.id);
    const line = stdout.split('\n').find((text) => text.includes('near_duplicate'))!;
    expect(stdout).toContain('REFUSED  copy-of-third (batch.jsonl:2)');
    expect(line).toContain(`"${target.id}" (${CORPUS}:3, optimization`);
    expect(line).toContain('the same request in shadow and optimization would leak');
  });
});

describe('partitions too small to mean anything', () => {
  it('warn with the number needed', async () => {
    const tiny = makeSmallStudy({ optimization: 6, anchor: 1, shadow: 3, config: ['stopping: { maxExperiments: 0 }'] });
    try {
      const { stderr } = await kloop('run', tiny.dir);
      expect(stderr).toContain(
        'corpus: WARNING: the shadow partition holds 3 example(s): fewer than 5 paired differences cannot confirm a gain, and nothing graduates from it; add at least 2',
      );
      expect(stderr).toContain(
        'corpus: WARNING: the anchor partition holds 1 example(s): fewer than 3 hand-chosen cases protect almost nothing; mark at least 2 more',
      );
      const status = JSON.parse((await kloop('corpus', 'status', tiny.dir, '--json')).stdout) as {
        warnings: Array<{ partition: string; needed: number }>;
      };
      expect(status.warnings).toEqual([
        expect.objectContaining({ partition: 'shadow', size: 3, needed: 5 }),
        expect.objectContaining({ partition: 'anchor', size: 1, needed: 3 }),
      ]);
    } finally {
      tiny.cleanup();
    }
  });
});

describe('corpusPolicy.partialGold', () => {
  it('refuses a corpus-file record without an app type by default, and admits it when set', async () => {
    const partial: IntentExampleRecord = {
      id: 'partial-gold-file-01',
      goal: 'The library lends books to members; each loan has a due date and members pay a fine when late.',
      expected: { entities: [{ name: 'Book' }, { name: 'Member' }, { name: 'Loan' }] },
      tags: [],
      partition: 'shadow',
    };
    for (const [setting, admitted] of [
      [false, false],
      [true, true],
    ] as const) {
      const small = makeSmallStudy({
        optimization: 6,
        anchor: 3,
        shadow: 5,
        config: ['stopping: { maxExperiments: 0 }', ...(setting ? ['corpusPolicy: { partialGold: true }'] : [])],
      });
      try {
        appendFileSync(path.join(small.dir, CORPUS), `${JSON.stringify(partial)}\n`);
        const loaded = loadStudy(small.dir);
        expect(
          loaded.partitions.shadow.map((example) => example.id).includes(partial.id),
          `partialGold ${setting}`,
        ).toBe(admitted);
        const { stderr } = await kloop('run', small.dir);
        if (admitted) expect(stderr).toContain('15 admitted, 0 refused');
        else
          expect(stderr).toContain(
            `${CORPUS}:15 partial-gold-file-01: non_trivial_gold expected.appType: the gold has no app type`,
          );
      } finally {
        small.cleanup();
      }
    }
  });
});

describe('kloop corpus promote and records new to the files', () => {
  it('leaves them pending: the next run admits them and says so', async () => {
    const own = makeSmallStudy({ optimization: 6, anchor: 3, shadow: 6, config: ['stopping: { maxExperiments: 0 }'] });
    try {
      expect((await kloop('run', own.dir)).code).toBe(0);
      const pending = referenceCorpus().shadow.slice(11, 12);
      appendFileSync(path.join(own.dir, CORPUS), pending.map((record) => `${JSON.stringify(record)}\n`).join(''));
      const anchor = loadStudy(own.dir).partitions.anchor[0]!.id;
      const promoted = await kloop('corpus', 'promote', own.dir, anchor, '--to', 'shadow', '--by', 'dan', '--json');
      expect(promoted.code, promoted.stderr).toBe(0);
      const shadowEvents = async (): Promise<Array<string | null>> => {
        const db = await openDatabase(studyDatabasePath(own.dir), { readonly: true });
        try {
          return (await db.selectFrom('corpus_events').select('example_id').where('kind', '=', 'shadow').execute()).map(
            (row) => row.example_id,
          );
        } finally {
          await db.destroy();
        }
      };
      // Before, the promotion admitted the pending record without a word, and no run ever reported its admission.
      expect(await shadowEvents()).not.toContain(pending[0]!.id);
      const { stderr } = await kloop('run', own.dir);
      expect(stderr).toContain('corpus: 1 record(s) new to the study in the corpus files: 1 admitted, 0 refused');
      expect(await shadowEvents()).toContain(pending[0]!.id);
    } finally {
      own.cleanup();
    }
  });
});
