/**
 * A study that grows, as a new user meets it (issue 19): a 10-example intent
 * study in a new domain (tests/fixtures/marina-study) whose every candidate
 * is refused `not_significant`; the report says how many optimization
 * examples the refused edits would need; 10 more records added to a corpus
 * file are admitted into shadow or refused by file:line; the shadow examples
 * graduate by rounds although no decision ever consults the shadow, until the
 * shadow is no larger than the optimization partition.
 */
import { copyFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStudy } from '../src/study/load-study.ts';
import { requiredExamples, significanceShortfall } from '../src/report/stuck-advice.ts';
import { EXAMPLE_STUDY, kloop } from './small-intent-study.ts';

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures', 'marina-study');
let dir: string;

function sizes(): Record<string, number> {
  const { partitions } = loadStudy(dir);
  return {
    optimization: partitions.optimization.length,
    anchor: partitions.anchor.length,
    shadow: partitions.shadow.length,
  };
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kloop-marina-'));
  cpSync(FIXTURE, dir, { recursive: true });
  rmSync(path.join(dir, 'more.jsonl'));
  for (const file of ['playbook.yaml', 'program.md'])
    copyFileSync(path.join(EXAMPLE_STUDY, file), path.join(dir, file));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a 10-example study in a new domain', () => {
  it('run 1: every candidate refused not_significant; the report names the examples needed, computed from the paired differences', async () => {
    const { code, stdout, stderr } = await kloop('run', dir, '--json');
    expect(code).toBe(0);
    expect(stderr).toContain(
      'corpus: 10 record(s) new to the study in the corpus files (its first run): 10 admitted, 0 refused',
    );
    expect(stderr).toContain('corpus: WARNING: the shadow partition holds 3 example(s)');
    const report = JSON.parse(stdout) as {
      accepted: number;
      stuck: {
        dominantReason: string;
        message: string;
        steps: string[];
        notSignificant: {
          optimizationExamples: number;
          toAdd: number;
          best: {
            experimentId: number;
            testedOn: number;
            requiredExamples: number;
            effectSize: number;
            pValue: number;
          };
        };
      };
    };
    expect(report.accepted).toBe(0);
    expect(report.stuck.dominantReason).toBe('not_significant');
    // The case: the best edit fixes one of six examples (p = 0.18); 19 examples would make that significant.
    expect(report.stuck.notSignificant).toMatchObject({
      optimizationExamples: 6,
      toAdd: 13,
      best: { testedOn: 6, requiredExamples: 19 },
    });
    expect(report.stuck.notSignificant.best.pValue).toBeCloseTo(0.1816, 4);
    expect(report.stuck.message).toContain('would reach α = 0.05 with 19 optimization examples');
    expect(report.stuck.message).toContain('add at least 13');
    expect(report.stuck.steps[0]).toContain('kloop corpus add');
    // The count follows from the decision's stored evidence.
    const shown = JSON.parse(
      (await kloop('show', dir, String(report.stuck.notSignificant.best.experimentId), '--json')).stdout,
    ) as { checks: unknown[]; reason: string };
    expect(shown.reason).toBe('not_significant');
    const shortfall = significanceShortfall(
      { id: report.stuck.notSignificant.best.experimentId, reason: shown.reason, evidence: { checks: shown.checks } },
      0.05,
    )!;
    expect(shortfall.effectSize).toBeCloseTo(report.stuck.notSignificant.best.effectSize, 9);
    expect(requiredExamples(shortfall.effectSize, 0.05)).toBe(19);
    expect(sizes()).toEqual({ optimization: 6, anchor: 1, shadow: 3 });
  }, 60_000);

  it('run 2: 10 more records in a corpus file, 8 admitted into shadow and 2 refused by file:line; the first shadow examples graduate by rounds', async () => {
    copyFileSync(path.join(FIXTURE, 'more.jsonl'), path.join(dir, 'corpus', 'more.jsonl'));
    const { code, stderr, stdout } = await kloop('run', dir);
    expect(code).toBe(0);
    expect(stderr).toContain('corpus: 10 record(s) new to the study in the corpus files: 8 admitted, 2 refused');
    expect(stderr).toMatch(/8 → shadow \(new after the study began: shadow first; corpus\/more\.jsonl\)/);
    expect(stderr).toContain('corpus/more.jsonl:9 inventory-spare-parts-19: grounding');
    expect(stderr).toContain(
      'corpus/more.jsonl:10 booking-visitor-berths-20: near_duplicate goal: the goal is a near-duplicate of "booking-marina-berths-01" (corpus/marina.jsonl:1, optimization;',
    );
    expect(stderr).toContain(
      'corpus: 3 shadow example(s) graduated into optimization (events-regatta-08, hr-marina-staff-09, marketplace-charter-10); partitions now: optimization 9, anchor 1, shadow 8',
    );
    expect(stdout).toContain('stuck: no candidate was accepted in this run; the most common refusal: not_significant');
    expect(sizes()).toEqual({ optimization: 9, anchor: 1, shadow: 8 });
  }, 60_000);

  it('run 3: the admitted examples are due by rounds but wait, since the shadow (8) is no larger than optimization (9)', async () => {
    const { code, stderr } = await kloop('run', dir);
    expect(code).toBe(0);
    expect(stderr).toContain('corpus: 2 record(s) new to the study in the corpus files: 0 admitted, 2 refused');
    expect(stderr).not.toMatch(/graduated into optimization/);
    expect(sizes()).toEqual({ optimization: 9, anchor: 1, shadow: 8 });
    const status = await kloop('corpus', 'status', dir);
    expect(status.stdout).toMatch(
      /due example\(s\) wait: due by time in shadow only, and the shadow \(8\) is no larger than the optimization partition \(9\)/,
    );
  }, 60_000);
});
