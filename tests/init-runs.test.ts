/**
 * Issue 35, item 1: the studies `kloop init` offers run as written. For each
 * task × executor that needs no model, `kloop init`, then `kloop run` on its
 * own four sample records, with nothing of kloop.yaml changed: the run
 * starts, evaluates the seed on every partition and stops cleanly.
 *
 * No change can be accepted on four samples, and the run says why: the
 * optimization partition has at most 2 records and the shadow 1, so neither
 * McNemar's exact test (classification: 5 fixed needed at α = 0.05) nor the
 * shadow check can pass; the power check warns before the run.
 *
 * Acceptance on a corpus of the test's own, with the settings init writes:
 * classification × command in tests/new-user-classification.test.ts (the
 * FAQ router: a bundle accepted, the shadow confirming); the keyword-rules
 * proposer's budget in tests/stuck-factors.test.ts.
 *
 * Not yet here (listed as todo below): the combinations that call a model.
 * An `llm` executor's study requires calibration, which needs a fake model
 * that tells the seed prompt from its ablation (a model that always answers
 * right is refused: Cohen's d = 0); a reflective proposer on a command
 * study's rules.json needs a candidate its program accepts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kloop } from './cli-in-process.ts';

const root = mkdtempSync(path.join(tmpdir(), 'kloop-init-runs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The combinations that call no model (the offline proposers), and what the power check says of their samples. */
const COMBINATIONS = [
  ['intent', 'offline'],
  ['classification', 'command'],
  ['custom', 'command'],
] as const;
const WITH_A_MODEL = [
  ['intent', 'llm'],
  ['intent', 'command'],
  ['classification', 'llm'],
  ['extraction', 'llm'],
  ['extraction', 'command'],
  ['custom', 'llm'],
] as const;

interface RunJson {
  baseline: Record<'optimization' | 'anchor' | 'shadow', number | null>;
  accepted: number;
  stopReason: string;
  powerWarnings?: Array<{ partition: string; have: number; needed: number }>;
}

describe('every study kloop init writes runs on its samples as written', () => {
  for (const [task, executor] of COMBINATIONS) {
    it(`${task} × ${executor}`, { timeout: 120_000 }, async () => {
      const dir = path.join(root, `${task}-${executor}`);
      const init = await kloop('init', dir, '--task', task, '--executor', executor);
      expect(init.code, init.stderr).toBe(0);
      const run = await kloop('run', dir, '--json');
      expect(run.code, run.stderr.split("\n").slice(-8).join("\n")).toBe(0);
      const report = JSON.parse(run.stdout) as RunJson;
      for (const partition of ['optimization', 'anchor', 'shadow'] as const) expect(report.baseline[partition], partition).not.toBeNull();
      expect(report.accepted).toBe(0);
      expect(['plateau', 'no_new_proposals', 'max_rounds', 'max_experiments']).toContain(report.stopReason);
      // Why nothing could pass: the power check names the shadow (1 sample), and for classification optimization too.
      expect(run.stderr).toContain('WARNING: the shadow partition holds 1 example(s)');
    });
  }
  for (const [task, executor] of WITH_A_MODEL) it.todo(`${task} × ${executor} (calls a model: a loopback fake that calibrates and proposes a valid candidate)`);
});
