/**
 * Peer fault 5 (issue #36; Ax PR #241): a scorer in promptfoo's
 * `{ pass, score, reason }` shape that returns `{ pass: false, score: 1 }`
 * scored 1: `score` silently won. `pass` decides: a failed output scores 0
 * whatever its score, a passing one its score (default 1).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { kloop } from '../cli-in-process.ts';
import { makeCustomStudy } from './custom-study.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A score.ts without components: pass when the queue is right; `score` as the scenario gives it. */
function passScorer(score: string): string {
  return `export function score(output: { label: string }, expected: { label: string }) {
  const pass = output.label === expected.label;
  return { pass, score: ${score}, reason: pass ? '' : \`expected \${expected.label}, routed to \${output.label}\` };
}
`;
}

describe('a scorer that returns { pass, score }', () => {
  it('pass: false scores 0 whatever score says; kloop eval averages the passes (2 of 6 on optimization)', async () => {
    const study = await makeCustomStudy(cleanups);
    study.write('score.ts', passScorer('1'));
    const result = await kloop('eval', study.dir, '--json');
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { partitions: Record<string, { composite: number }> };
    // The sample rules route the subscription and card tickets (t01, t02, t03, t06) to the default queue: 2 of 6 right.
    expect(report.partitions.optimization!.composite).toBeCloseTo(2 / 6, 10);
    // anchor: all 3 right; shadow: t10 (subscription) wrong, 2 of 3 right.
    expect(report.partitions.anchor!.composite).toBe(1);
    expect(report.partitions.shadow!.composite).toBeCloseTo(2 / 3, 10);
  });

  it('pass: true keeps its score as the grade of a passing output (0.5 for each right queue)', async () => {
    const study = await makeCustomStudy(cleanups);
    study.write('score.ts', passScorer('0.5'));
    const result = await kloop('eval', study.dir, '--json', '--partition', 'optimization');
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { composite: number }).composite).toBeCloseTo((2 * 0.5) / 6, 10);
  });

  it('a pass that is not a boolean is a scorer bug, refused by name (exit 2)', async () => {
    const study = await makeCustomStudy(cleanups);
    study.write('score.ts', `export function score() { return { pass: 'yes', score: 1 }; }\n`);
    const result = await kloop('eval', study.dir, '--partition', 'optimization');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('score() returned a pass that is not true or false ("yes")');
  });
});
