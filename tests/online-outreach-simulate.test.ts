/**
 * `kloop run examples/outreach --simulate` through the compiled CLI, on a
 * copy of the example (a fresh clone: no notebook, no key, no network): the
 * loop calibrates on an A/A experiment, refuses the novelty variant by its
 * confirmation window, accepts the good variants, stops the harmful one for
 * harm, and prints its report labelled SIMULATED. Exact for the seed (7).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runKloop } from './reliability-fixture.ts';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

function exampleCopy(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-outreach-'));
  folders.push(folder);
  const study = path.join(folder, 'outreach');
  cpSync(path.join(ROOT, 'examples/outreach'), study, {
    recursive: true,
    filter: (source) => !source.includes(`${path.sep}.kloop`),
  });
  return study;
}

describe('kloop run examples/outreach --simulate', () => {
  it('accepts the good variants and no harmful one, refuses the novelty by its confirmation window (SIMULATED, --json)', async () => {
    const study = exampleCopy();
    const result = await runKloop(['run', study, '--simulate', '--json'], {
      env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' },
    });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      simulated: boolean;
      label: string;
      days: number;
      exitCode: number;
      experiments: Array<{ id: number; kind: string; status: string; reason: string | null; rationale: string }>;
    };
    expect([report.simulated, report.label, report.days, report.exitCode]).toEqual([true, 'SIMULATED', 42, 0]);
    expect(
      report.experiments.map((experiment) => [
        experiment.id,
        experiment.kind,
        experiment.status,
        experiment.reason,
        experiment.rationale,
      ]),
    ).toEqual([
      [1, 'aa', 'calibrated', 'calibrated', 'A/A calibration: the incumbent against itself'],
      [2, 'ab', 'refused', 'specialization', 'Open with a joke about this week’s news.'],
      [3, 'ab', 'accepted', 'accepted', 'End with a single yes-or-no question.'],
      [4, 'ab', 'refused', 'harm', 'Send a follow-up every day until they reply.'],
      [5, 'ab', 'accepted', 'accepted', 'Keep the first email under 80 words.'],
      [6, 'ab', 'decision', null, 'Sign off with your first name only.'],
    ]);

    // kloop show: every online check of the last look, with statistic, threshold and verdict.
    const shown = await runKloop(['show', study, '4', '--simulated', '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const harmful = JSON.parse(shown.stdout) as {
      status: string;
      reason: string;
      checks: Array<{ name: string; verdict: string; statistic: number | null; threshold: number | null }>;
    };
    expect([harmful.status, harmful.reason]).toEqual(['refused', 'harm']);
    expect(harmful.checks.map((check) => [check.name, check.verdict])).toEqual([
      ['srm', 'pass'],
      ['harm', 'fail'],
    ]);
    expect([typeof harmful.checks[1]!.statistic, typeof harmful.checks[1]!.threshold]).toEqual(['number', 'number']);
    const text = await runKloop(['show', study, '3', '--simulated']);
    expect(text.code, text.stderr).toBe(0);
    for (const check of ['srm', 'harm', 'minimum_units', 'primary', 'guardrails', 'confirmation'])
      expect(text.stdout).toMatch(new RegExp(`^${check}\\s+pass\\s+\\S+\\s+\\S+`, 'm'));
    expect(text.stdout).toMatch(/^SIMULATED — status: accepted/m);
  });

  it('labels the text report SIMULATED on every result line', async () => {
    const study = exampleCopy();
    const result = await runKloop(['run', study, '--simulate', '--days', '5', '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n').filter((line) => line.trim() !== '' && !/^(id|\d+)\s/.test(line));
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(line).toMatch(/^SIMULATED/);
    expect(result.stdout).toContain('1   A/A   calibrated');
  });
});
