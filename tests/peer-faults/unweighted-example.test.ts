/**
 * Peer fault 3 (issue #36; promptfoo PR #8206): an example with no weighted
 * component scored 0 and was averaged in. `weightedComposite` gave 0 when the
 * example's total weight was 0: with the extraction task and a partial gold
 * naming only `dueDate` (weight 0), an example the program got right pulled
 * the partition to 0.5833 where its scorable examples give 0.875; a custom
 * scorer that omits the only weighted component did the same, and kloop
 * invented the feedback `scored 0; the scorer gave no reason`.
 *
 * Now such an example has no score (invalid reason `unscored`, not counted
 * as invalid): left out of the composite and named, by `kloop eval` and by
 * the run's report.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kloop } from '../cli-in-process.ts';
import { makeCustomStudy } from './custom-study.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

interface EvalReport {
  composite: number;
  invalid: number;
  unscored: string[];
  partitions: Record<string, { composite: number; invalid: number; unscored: string[] }>;
  examples: Array<{ id: string; valid: boolean; invalidReason?: string; message?: string; feedback?: string }>;
}

describe('the extraction task with a partial gold that names only a weight-0 field', () => {
  it('leaves the example out of the composite (0.875, not 0.5833) and names it', async () => {
    const parent = mkdtempSync(path.join(tmpdir(), 'kloop-peer-fault-'));
    cleanups.push(() => rmSync(parent, { recursive: true, force: true }));
    const dir = path.join(parent, 'invoices');
    expect((await kloop('init', dir, '--task', 'extraction', '--executor', 'command')).code).toBe(0);
    const config = path.join(dir, 'kloop.yaml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace('dueDate: { match: exact }', 'dueDate: { match: exact, weight: 0 }'),
    );
    // A documented partial gold: only the due date, which the sample program reads right.
    const corpus = path.join(dir, 'corpus', 'examples.yaml');
    writeFileSync(
      corpus,
      `${readFileSync(corpus, 'utf8')}\n- id: invoice-0005\n  input: |-\n    INVOICE INV-3300\n    From: Baltic Freight GmbH\n    Issued: 2026-05-02   Due date: 2026-06-01\n    Total due: EUR 410.00\n  expected: { dueDate: "2026-06-01" }\n  partition: optimization\n`,
    );
    const result = await kloop('eval', dir, '--json', '--partition', 'optimization');
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as EvalReport;
    // invoice-0001 scores 1 and invoice-0003 0.75 (vendor missed; weights vendor 1, invoiceNumber 1, total 2): (1 + 0.75) / 2.
    expect(report.composite).toBeCloseTo(0.875, 10);
    expect(report.unscored).toEqual(['invoice-0005']);
    expect(report.invalid).toBe(0);
    expect(report.examples.find((example) => example.id === 'invoice-0005')).toMatchObject({
      valid: false,
      invalidReason: 'unscored',
      message: 'no component of weight > 0 was scored (scored: dueDate (weight 0)): left out of the composite',
    });

    const text = await kloop('eval', dir, '--partition', 'optimization');
    expect(text.stdout).toContain(
      'left out of the composite, no component of weight > 0 scored (a missing score, not 0): 1 example(s): invoice-0005',
    );
    expect(text.stdout).toMatch(/^optimization\s+3\s+0\.8750\s/m);
  });
});

describe('a custom scorer that omits the only weighted component', () => {
  /** The sample score.ts with priority at weight 0, omitting label for account tickets (t05, and the anchor t09). */
  async function study() {
    const custom = await makeCustomStudy(cleanups);
    const text = custom
      .read('score.ts')
      .replace("{ name: 'priority', weight: 1,", "{ name: 'priority', weight: 0,")
      .replace(
        '    components: { label, priority },',
        "    components: expected.label === 'account' ? { priority } : { label, priority },",
      )
      .replace(/if \(priority < 1\) problems\.push\([^;]*;/, '');
    expect(text).toContain("{ name: 'priority', weight: 0,");
    expect(text).toContain("expected.label === 'account' ? { priority }");
    custom.write('score.ts', text);
    return custom;
  }

  it('kloop eval leaves it out, names it and invents no feedback', async () => {
    const custom = await study();
    const result = await kloop('eval', custom.dir, '--json');
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as EvalReport;
    // optimization: t01, t02, t03, t06 misrouted (0), t04 right (1), t05 left out: 1 / 5.
    expect(report.partitions.optimization).toMatchObject({ invalid: 0, unscored: ['t05'] });
    expect(report.partitions.optimization!.composite).toBeCloseTo(1 / 5, 10);
    expect(report.partitions.anchor).toMatchObject({ composite: 1, unscored: ['t09'] });
    expect(result.stdout).not.toContain('the scorer gave no reason');
  });

  it("kloop run's report names the examples left out, in text and --json", async () => {
    const custom = await study();
    const json = await kloop('run', custom.dir, '--json', '--max-experiments', '0');
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as {
      unscored: { baseline: string[]; best: string[] };
      baseline: Record<string, number>;
    };
    expect(report.unscored).toEqual({ baseline: ['t05', 't09'], best: ['t05', 't09'] });
    expect(report.baseline.optimization).toBeCloseTo(1 / 5, 10);
    const text = await kloop('run', custom.dir, '--max-experiments', '0');
    expect(text.stdout).toContain(
      'baseline (v1): left out of the composite, no component of weight > 0 scored (a missing score, not 0): 2 example(s): t05, t09',
    );
  });
});
