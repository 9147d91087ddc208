/**
 * The reflective proposer of an online study, through the CLI
 * (`kloop run <study> --simulate`, in-process) against a loopback server
 * speaking the OpenAI chat completions API: the model is told the decided
 * experiments' outcomes (variant, verdict, decision-window units, means,
 * lift and interval) and nothing of their confirmation windows, and each
 * variant it writes becomes an experiment. A copy of examples/outreach with
 * smaller windows (1,500 units per arm) and no ramp, seed 7, 12 simulated
 * days: the first variant is refused by its confirmation window at day 11,
 * so the second request must carry its decision window and not its
 * confirmation window. A spent model budget stops the study as `budget`.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOnlineConfig } from '../src/online/config.ts';
import { openDatabase } from '../src/storage/database.ts';
import { armStatistics } from '../src/storage/online-store.ts';
import { kloop } from './cli-in-process.ts';
import { startFakeOpenAiServer, type FakeServer } from './llm-fake-openai-server.ts';

const repo = path.resolve(import.meta.dirname, '..');
const folders: string[] = [];
let server: FakeServer;
const SEED = readFileSync(path.join(repo, 'examples', 'outreach', 'sequence_strategy.md'), 'utf8');
/** The model's variants, in order: the seed with one hint line of the simulated world added. */
const VARIANTS = ['Open with a joke about this week’s news.', 'End with a single yes-or-no question.'];

beforeAll(async () => {
  server = await startFakeOpenAiServer((request) => {
    const line = VARIANTS[Math.min(request.index, VARIANTS.length - 1)]!;
    return {
      content: JSON.stringify({ rationale: `model: ${line}`, text: `${SEED.replace(/\s*$/, '')}\n- ${line}\n` }),
      usage: { prompt_tokens: 1000, completion_tokens: 200 },
    };
  });
});
afterAll(async () => {
  await server.close();
  folders.forEach((folder) => rmSync(folder, { recursive: true, force: true }));
});

function studyCopy(stopping = 'stopping:\n  maxExperiments: 6\n'): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-reflective-'));
  folders.push(folder);
  const study = path.join(folder, 'outreach');
  cpSync(path.join(repo, 'examples', 'outreach'), study, {
    recursive: true,
    filter: (source) => !source.includes(`${path.sep}.kloop`),
  });
  const config = readFileSync(path.join(study, 'kloop.yaml'), 'utf8')
    .replace(/minUnitsPerArm: 3000 /, 'minUnitsPerArm: 1500 ')
    .replace(/confirmationUnits: 5000 /, 'confirmationUnits: 1500 ')
    .replace(/ramp: \[0\.2, 0\.5\] /, 'ramp: [0.5]')
    .replace(
      /proposer: \{ kind: ideas \}.*\n/,
      `proposer: { kind: reflective, model: "openai-compatible:fake-model", baseURL: "${server.baseURL}" }\n`,
    )
    .replace(/stopping:\n {2}maxExperiments: 6\n/, stopping);
  writeFileSync(path.join(study, 'kloop.yaml'), config);
  expect(loadOnlineConfig(study).proposer.kind).toBe('reflective');
  return study;
}

describe('the reflective online proposer through kloop run --simulate', () => {
  it('is told the decided outcomes, never a confirmation window, and its variant becomes an experiment', async () => {
    const study = studyCopy();
    const before = server.calls;
    const result = await kloop('run', study, '--simulate', '--days', '12', '--quiet', '--json');
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      experiments: Array<{
        id: number;
        status: string;
        reason: string | null;
        rationale: string;
        candidateVersionId: number;
        primary: {
          incumbentMean: number;
          candidateMean: number;
          analysedUnits: number;
          interval: { lower: number; upper: number };
        };
        units: { confirmation: { incumbent: number; candidate: number } };
      }>;
    };
    expect(
      report.experiments.map((experiment) => [
        experiment.id,
        experiment.status,
        experiment.reason,
        experiment.rationale,
      ]),
    ).toEqual([
      [1, 'calibrated', 'calibrated', 'A/A calibration: the incumbent against itself'],
      [2, 'refused', 'not_confirmed', `model: ${VARIANTS[0]}`],
      [3, 'decision', null, `model: ${VARIANTS[1]}`],
    ]);
    const requests = server.requests.slice(before);
    expect(requests).toHaveLength(2);
    expect(requests.every((request) => request.body.model === 'fake-model')).toBe(true);
    expect(requests[0]!.user).toContain('None yet: this is the first experiment.');
    // The second request: experiment 2's verdict and decision window, as the notebook holds them.
    const decided = report.experiments[1]!;
    const second = requests[1]!.user;
    expect(second).toContain('### Experiment 2: refused (not_confirmed)');
    expect(second).toContain(`Change: model: ${VARIANTS[0]}`);
    expect(second).toContain(`- ${VARIANTS[0]}`);
    expect(second).toContain(
      `Outcome on ${decided.primary.analysedUnits} analysed units: incumbent ${(decided.primary.incumbentMean * 100).toFixed(2)}%, candidate ${(decided.primary.candidateMean * 100).toFixed(2)}%, relative lift +`,
    );
    expect(second).toContain(
      `Δ interval [${decided.primary.interval.lower}, ${decided.primary.interval.upper}] at 0.95`,
    );
    // Nothing of the confirmation window: not the word (the verdict's name aside), not its units, not its means.
    expect(second.replaceAll('(not_confirmed)', '')).not.toMatch(/confirm/i);
    const db = await openDatabase(path.join(study, '.kloop', 'simulated.db'), { readonly: true });
    try {
      const confirmation = await armStatistics(db, {
        experimentId: 2,
        metric: 'reply_rate',
        kind: 'binary',
        window: 'confirmation',
        closedBy: '2026-12-31T00:00:00.000Z',
      });
      expect(confirmation.incumbent.units).toBeGreaterThan(1500);
      for (const arm of [confirmation.incumbent, confirmation.candidate]) {
        expect(second).not.toContain(`${arm.units} `);
        expect(second).not.toContain(`${((arm.sum / arm.units) * 100).toFixed(2)}%`);
      }
      // The model's text is what experiment 3 serves.
      const version = await db
        .selectFrom('artifact_versions')
        .select('text')
        .where('id', '=', report.experiments[2]!.candidateVersionId)
        .executeTakeFirstOrThrow();
      expect(version.text).toBe(`${SEED.replace(/\s*$/, '')}\n- ${VARIANTS[1]}\n`);
      const proposer = await db
        .selectFrom('online_experiments')
        .select('proposer')
        .where('id', '=', 3)
        .executeTakeFirstOrThrow();
      expect(proposer.proposer).toBe('reflective');
    } finally {
      await db.destroy();
    }
  }, 120_000);

  it('stops as budget once the model has cost stopping.maxCostUsd, before another call', async () => {
    const study = studyCopy('stopping:\n  maxExperiments: 6\n  maxCostUsd: 0\n');
    const before = server.calls;
    const result = await kloop('run', study, '--simulate', '--days', '6', '--quiet', '--json');
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { stopped: { reason: string; detail: string } };
    expect(report.stopped.reason).toBe('budget');
    expect(report.stopped.detail).toContain('stopping.maxCostUsd: 0');
    expect(server.calls).toBe(before);
  }, 120_000);
});
