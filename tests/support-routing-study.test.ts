/**
 * The support-routing example study end to end, as a user runs it
 * (`kloop run examples/support-routing`, offline, from the shipped settings),
 * on a copy of the folder with a small experiment budget: the first round
 * proposes learned scores and three other candidates, and the gate accepts
 * the scores because the misroute rate falls on optimization and on the
 * shadow partition with no anchor lost. The executor is deterministic, so
 * the figures are exact.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRoutingRules } from '../src/executors/routing-rules/routing-rules.ts';
import { kloop } from './cli-in-process.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(tmpdir(), 'kloop-support-routing-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface RunReport {
  headline: { name: string; baseline: Record<string, number>; best: Record<string, number> };
  details: { baseline: Record<string, { examples: number }> };
  experiments: number;
  accepted: number;
  refused: Record<string, number>;
  stopReason: string;
  bestArtifact: string;
  exitCode: number;
}

describe('examples/support-routing, run end to end', () => {
  it('accepts a change that lowers the misroute rate on optimization (124 → 58 of 260) and shadow (18 → 9 of 30), anchors held', {
    timeout: 240_000,
  }, async () => {
    const study = path.join(work, 'support-routing');
    cpSync(path.join(ROOT, 'examples/support-routing'), study, {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}.kloop`),
    });
    const run = await kloop('run', study, '--json', '--quiet', '--max-experiments', '4');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as RunReport;
    expect(report.exitCode).toBe(0);
    expect(report.headline.name).toBe('misroute rate');
    expect([
      report.details.baseline.optimization!.examples,
      report.details.baseline.anchor!.examples,
      report.details.baseline.shadow!.examples,
    ]).toEqual([260, 10, 30]);
    // The misroute rate is 1 − accuracy, accuracy the share of tickets routed right.
    const misroute = (wrong: number, of: number) => 1 - (of - wrong) / of;
    expect(report.headline.baseline).toEqual({ optimization: misroute(124, 260), anchor: 0, shadow: misroute(18, 30) });
    expect(report.headline.best).toEqual({ optimization: misroute(58, 260), anchor: 0, shadow: misroute(9, 30) });
    expect([report.experiments, report.accepted, report.stopReason]).toEqual([4, 1, 'max_experiments']);
    // The accepted change is the learned scores section; the rules list is the seed's.
    const best = parseRoutingRules(readFileSync(report.bestArtifact, 'utf8'));
    const seed = parseRoutingRules(readFileSync(path.join(study, 'rules.yaml'), 'utf8'));
    expect(best.rules).toEqual(seed.rules);
    expect(seed.scores).toEqual([]);
    expect(best.scores!.reduce((sum, entry) => sum + entry.terms.length, 0)).toBe(120);

    // The notebook says which experiment was accepted, and the shadow check's evidence.
    const history = await kloop('history', study, '--json');
    const experiments = (
      JSON.parse(history.stdout) as { experiments: Array<{ id: number; decision: string; reason: string }> }
    ).experiments;
    const accepted = experiments.filter((experiment) => experiment.decision === 'accepted');
    expect(accepted.length).toBe(1);
    const shown = await kloop('show', study, String(accepted[0]!.id));
    expect(shown.stdout).toMatch(/^rationale: Set the scores to 120 weighted term\(s\) for 6 queue\(s\)/m);
    expect(shown.stdout).toContain(
      "McNemar's exact test on shadow: b = 9 (only the candidate right), c = 0 (only the incumbent right)",
    );
  });
});
