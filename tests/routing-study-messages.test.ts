/**
 * Issue 35's smaller points, on one run of the FAQ-routing study
 * (tests/faq-study.ts; the in-process routing-rules executor, and
 * `proposer.maxEvaluations: 10` so that the run refuses single edits and
 * skips duplicates):
 *
 * - the progress lines give each decision's optimization
 *   figure in the study's headline (`reportAs: misroute rate`), as the
 *   round lines and the report do, not the accuracy beside it;
 * - `kloop report` (JSON, and the HTML file in Chromium) and `kloop view`
 *   show the misroute rate;
 * - `kloop show` of a skipped duplicate names the experiment it duplicates;
 * - a JSON rules delta does not show a rule as removed and added again when
 *   only its trailing comma changed.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kloop } from './cli-in-process.ts';
import { makeFaqStudy, setProposerKey, useRoutingRulesExecutor } from './faq-study.ts';

const CHROMIUM = process.env.KLOOP_CHROMIUM ?? '/usr/bin/chromium';
const repo = path.resolve(import.meta.dirname, '..');
const root = mkdtempSync(path.join(tmpdir(), 'kloop-routing-messages-'));
const dir = path.join(root, 'faq');
let stderr = '';
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface HistoryJson {
  experiments: Array<{ id: number; decision: string; reason: string; delta: string; composite: number | null }>;
}

beforeAll(async () => {
  expect((await kloop('init', dir, '--task', 'classification', '--executor', 'command')).code).toBe(0);
  makeFaqStudy(dir);
  useRoutingRulesExecutor(dir);
  setProposerKey(dir, 'maxEvaluations: 10');
  const run = await kloop('run', dir);
  expect(run.code, run.stderr).toBe(0);
  stderr = run.stderr;
}, 120_000);

async function history(): Promise<HistoryJson> {
  return JSON.parse((await kloop('history', dir, '--json')).stdout) as HistoryJson;
}

describe('a misroute-rate study says misroute rate everywhere', () => {
  it('progress: every decision in the misroute rate, named, as the round lines', async () => {
    expect(stderr).toContain('best optimization misroute rate 0.8333 (on 12 examples)');
    const refused = (await history()).experiments.filter((experiment) => experiment.decision === 'refused');
    expect(refused.length).toBeGreaterThan(0);
    const decisions = stderr.split('\n').filter((line) => /^ {2}#\d+ refused/.test(line));
    expect(decisions.length).toBe(refused.length);
    for (const experiment of refused) {
      // A decision line holds the whole delta: its figure is on the delta's last line.
      const at = stderr.indexOf(`  #${experiment.id} refused`);
      const figure = /\[optimization ([^\]]+)\]/.exec(stderr.slice(at))![1];
      expect(figure).toBe(`misroute rate ${(1 - experiment.composite!).toFixed(4)}`);
    }
    expect(stderr).not.toMatch(/\[optimization \d/);
  });

  it('kloop report --format json: the overview carries the headline', async () => {
    const report = await kloop('report', dir, '--format', 'json');
    expect(report.code, report.stderr).toBe(0);
    expect((JSON.parse(report.stdout) as { overview: { headline: unknown } }).overview.headline).toEqual({
      name: 'misroute rate',
      complement: true,
    });
  });

  it('kloop report --format json: every experiment page carries the headline it labels its scores with', async () => {
    const report = await kloop('report', dir, '--format', 'json');
    expect(report.code, report.stderr).toBe(0);
    const { experiments } = JSON.parse(report.stdout) as { experiments: Array<{ id: number; headline: unknown }> };
    expect(experiments.length).toBeGreaterThan(0);
    for (const experiment of experiments)
      expect(experiment.headline, `experiment ${experiment.id}`).toEqual({ name: 'misroute rate', complement: true });
  });

  it.runIf(existsSync(CHROMIUM))(
    'the HTML report and kloop view show the misroute rate in Chromium',
    { timeout: 120_000 },
    async () => {
      const file = path.join(root, 'report.html');
      expect((await kloop('report', dir, '--format', 'html', '--out', file, '--quiet')).code).toBe(0);
      const viewer = spawn(process.execPath, [path.join(repo, 'bin', 'kloop.js'), 'view', dir, '--port', '0'], {
        cwd: repo,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const context = await chromium.launchPersistentContext(mkdtempSync(path.join(root, 'chromium-')), {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      try {
        let output = '';
        viewer.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
        const url = await new Promise<string>((resolve, reject) => {
          const timer = setInterval(() => {
            const found = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(output)?.[1];
            if (found !== undefined) {
              clearInterval(timer);
              resolve(found);
            } else if (viewer.exitCode !== null) {
              clearInterval(timer);
              reject(new Error(`kloop view exited: ${output}`));
            }
          }, 100);
        });
        for (const address of [`file://${file}`, `${url}/`]) {
          const page = await context.newPage();
          await page.goto(address);
          await page.waitForSelector('main [data-page="overview"] .tile');
          const tiles = await page
            .locator('.tile')
            .evaluateAll((elements) =>
              elements.map((element) => [
                element.querySelector('.label')?.textContent,
                element.querySelector('.value')?.textContent,
              ]),
            );
          expect(tiles, address).toContainEqual(['incumbent · optimization misroute rate', '0.8333']);
          expect(tiles, address).toContainEqual(['incumbent · shadow misroute rate', '0.7500']);
          expect(await page.locator('main [data-page="overview"] thead th').allTextContents(), address).toContain(
            'misroute rate',
          );
          // The experiment page labels its scores in the headline too, never "composite".
          const decided = (await history()).experiments.find((experiment) => experiment.composite !== null)!;
          await page.goto(`${address}#/experiments/${decided.id}`);
          await page.waitForSelector('main [data-page="experiment"] .tile');
          const labels = await page.locator('main [data-page="experiment"] .tile .label').allTextContents();
          expect(labels, address).toContain('misroute rate (optimization)');
          expect(
            await page
              .locator('main [data-page="experiment"] .tile', { hasText: 'misroute rate (optimization)' })
              .locator('.value')
              .textContent(),
            address,
          ).toBe((1 - decided.composite!).toFixed(4));
          expect(
            labels.filter((label) => label.includes('composite')),
            address,
          ).toEqual([]);
          await page.close();
        }
      } finally {
        await context.close();
        viewer.kill('SIGTERM');
      }
    },
  );
});

describe('kloop show of a duplicate, and JSON deltas', () => {
  it('names the experiment it duplicates (text and --json)', async () => {
    const { experiments } = await history();
    const duplicate = experiments.find((experiment) => experiment.reason === 'duplicate')!;
    expect(duplicate).toBeDefined();
    const json = JSON.parse((await kloop('show', dir, String(duplicate.id), '--json')).stdout) as {
      duplicateOf: { experimentId: number; sameContent: boolean; distance: number };
    };
    const original = experiments.find((experiment) => experiment.id === json.duplicateOf.experimentId)!;
    expect(original.decision).not.toBe('skipped');
    expect(json.duplicateOf.distance).toBeLessThan(0.2); // the gate's minDeltaDistance
    const text = await kloop('show', dir, String(duplicate.id));
    expect(text.stdout).toContain(`duplicate of: experiment ${original.id} (`);
    expect(text.stdout).toContain(`kloop show ${dir} ${original.id}`);
    // Not a duplicate: no such line.
    expect((await kloop('show', dir, String(original.id))).stdout).not.toContain('duplicate of:');
  });

  it('a rule that only gained a trailing comma is not removed and added again', async () => {
    const { experiments } = await history();
    const newRule = experiments.filter((experiment) => /^\+ +"id": "[a-z]+-[a-z]+",$/m.test(experiment.delta));
    expect(newRule.length).toBeGreaterThan(0); // the proposer added rules after the last one
    for (const experiment of experiments) {
      const removed = experiment.delta
        .split('\n')
        .filter((line) => line.startsWith('- '))
        .map((line) => line.slice(2).replace(/,\s*$/, ''));
      const added = experiment.delta
        .split('\n')
        .filter((line) => line.startsWith('+ '))
        .map((line) => line.slice(2).replace(/,\s*$/, ''));
      expect(
        removed.filter((line) => added.includes(line)),
        `experiment ${experiment.id}`,
      ).toEqual([]);
    }
  });
});
