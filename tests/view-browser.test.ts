/**
 * `kloop view` in a real browser: headless Chromium (Debian's `chromium`,
 * /usr/bin/chromium) driven by playwright-core, against `kloop view` started
 * as a user would on a finished copy of the reference study (examples/intent,
 * 12 experiments: tests/reference-study.ts). One browser and one
 * viewer for every check of this file; a screenshot of each page lands in
 * test-output/view-browser/.
 *
 * Without Chromium the checks are skipped and say so; with
 * KLOOP_REQUIRE_BROWSER=1 (set by .ci/run) a missing Chromium fails loudly.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeSignals } from '../src/signals/signal-store.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { enqueueReviewItem } from '../src/review/review-queue.ts';
import { kloop } from './cli-in-process.ts';
import { copyReferenceStudy, removeStudy } from './reference-study.ts';

/** Debian's Chromium; KLOOP_CHROMIUM names another build. */
const CHROMIUM = process.env.KLOOP_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.KLOOP_REQUIRE_BROWSER === '1';
const repo = path.resolve(import.meta.dirname, '..');
const output = path.join(repo, 'test-output', 'view-browser');
const TOKEN = 'browser-test-token-0123456789';
/** Bound on the steps that run the loop (a failure bound only: nothing waits for it to pass). */
const SLOW_MS = 240_000;

if (!hasChromium) {
  process.stderr.write(
    `\nkloop: the browser tests (tests/view-browser.test.ts) were NOT run: ${CHROMIUM} is missing. Install it with \`apt-get update && apt-get install -y chromium\` (as root); .ci/run installs it and requires them.\n\n`,
  );
}

describe.runIf(required && !hasChromium)('the browser tests', () => {
  it('need Chromium (KLOOP_REQUIRE_BROWSER=1)', () => {
    throw new Error(
      `KLOOP_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing: apt-get update && apt-get install -y chromium`,
    );
  });
});

/** Polls `condition` until it holds; fails with `what` if it never does (the deadline only bounds a failure). */
async function until<T>(what: string, condition: () => T | Promise<T>, timeoutMs = 90_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== null && value !== undefined && value !== false) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Reads the study database (read-only, a fresh connection each time). */
function query<T>(dir: string, sql: string): T {
  const db = new Database(path.join(dir, '.kloop', 'kloop.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).get() as T;
  } finally {
    db.close();
  }
}

interface History {
  experiments: Array<{ id: number; decision: string; composite: number | null }>;
  registryEvents: Array<{ version: number; actor: string | null; reason: string }>;
}

async function history(dir: string): Promise<History> {
  return JSON.parse((await kloop('history', dir, '--json')).stdout) as History;
}

/** The candidate points the overview chart draws, by experiment id. */
function chartPoints(page: Page): Promise<number[]> {
  return page.evaluate(() => {
    const chart = (
      window as unknown as {
        Chart: {
          getChart(
            id: string,
          ): { data: { datasets: Array<{ kloopRole?: string; data: Array<{ x: number }> }> } } | undefined;
        };
      }
    ).Chart.getChart('overview-chart');
    if (chart === undefined) return [];
    return chart.data.datasets
      .filter((dataset) => dataset.kloopRole === 'candidates')
      .flatMap((dataset) => dataset.data.map((point) => point.x))
      .sort((a, b) => a - b);
  });
}

describe.runIf(hasChromium)('kloop view in Chromium', () => {
  let dir: string;
  let viewer: ChildProcess;
  let url: string;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(output, { recursive: true });
    // The shared reference study (tests/reference-study.ts), run once for this file and others.
    ({ dir } = await copyReferenceStudy('kloop-view-browser-'));

    viewer = spawn(process.execPath, [path.join(repo, 'bin', 'kloop.js'), 'view', dir, '--port', '0'], {
      cwd: repo,
      env: { ...process.env, KLOOP_VIEW_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    viewer.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    url = await until('kloop view to print its address', () =>
      viewer.exitCode !== null
        ? Promise.reject(new Error(`kloop view exited: ${stderr}`))
        : /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stderr)?.[1],
    );

    context = await chromium.launchPersistentContext(mkdtempSync(path.join(tmpdir(), 'kloop-chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 1000 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // Console errors (a CSP violation, a missing file): none but the refused change's own 401.
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 401/.test(message.text())) pageErrors.push(message.text());
    });
  }, SLOW_MS);

  afterAll(async () => {
    await context?.close();
    if (viewer !== undefined && viewer.exitCode === null) {
      const exited = new Promise((resolve) => viewer.once('exit', resolve));
      viewer.kill('SIGTERM');
      await exited;
    }
    removeStudy(dir);
  });

  async function open(hash: string, name: string): Promise<void> {
    await page.goto(`${url}/${hash}`);
    await page.waitForSelector(`main [data-page="${name}"]`);
  }

  it('the overview chart shows one point per experiment', async () => {
    await open('#/overview', 'overview');
    const { experiments } = await history(dir);
    const points = await until('the chart', async () =>
      (await chartPoints(page)).length > 0 ? chartPoints(page) : null,
    );
    expect(points).toEqual(
      experiments.filter((experiment) => experiment.composite !== null).map((experiment) => experiment.id),
    );
    expect(points).toHaveLength(experiments.length); // every experiment of this study was evaluated
    expect(await page.locator('[data-testid="overview-chart"]').getAttribute('data-points')).toBe(
      String(experiments.length),
    );
    // The budget: executor calls are the results stored per example and repeat.
    const calls = (await page.locator('.tile', { hasText: 'executor calls' }).locator('.value').textContent())!.replace(
      /\D/g,
      '',
    );
    expect(Number(calls)).toBe(query<{ n: number }>(dir, 'select count(*) as n from example_results').n);
    await page.screenshot({ path: path.join(output, 'overview.png'), fullPage: true });
  });

  it('clicking an accepted experiment on the chart shows its checks and per-example changes', async () => {
    await open('#/overview', 'overview');
    await until('the chart', async () => (await chartPoints(page)).length > 0);
    // The pixel position of the first accepted point, as Chart.js laid it out.
    const target = await page.evaluate(() => {
      const chart = (
        window as unknown as {
          Chart: {
            getChart(id: string): {
              data: { datasets: Array<{ kloopReason?: string; data: Array<{ x: number }> }> };
              getDatasetMeta(index: number): { data: Array<{ x: number; y: number }> };
            };
          };
        }
      ).Chart.getChart('overview-chart');
      const index = chart.data.datasets.findIndex((dataset) => dataset.kloopReason === 'accepted');
      const element = chart.getDatasetMeta(index).data[0]!;
      return { x: element.x, y: element.y, id: chart.data.datasets[index]!.data[0]!.x };
    });
    const box = (await page.locator('#overview-chart').boundingBox())!;
    await page.mouse.click(box.x + target.x, box.y + target.y);
    await page.waitForSelector(`main [data-page="experiment"][data-experiment="${target.id}"]`);
    const checks = await page
      .locator('[data-testid="checks"] tbody tr')
      .evaluateAll((rows) => rows.map((row) => [row.getAttribute('data-check'), row.children[1]!.textContent]));
    expect(checks).toEqual([
      ['constraints', 'pass'],
      ['validity', 'pass'],
      ['margin', 'pass'],
      ['significance', 'pass'],
      ['anchors', 'pass'],
      ['shadow', 'pass'],
    ]);
    const changes = await page
      .locator('[data-testid="example-changes"] tbody tr')
      .evaluateAll((rows) => rows.map((row) => [row.children[0]!.textContent, row.children[4]!.textContent]));
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.every(([partition]) => ['optimization', 'anchor', 'shadow'].includes(partition ?? ''))).toBe(true);
    const sizes = changes.map(([, change]) => Math.abs(Number((change ?? '').replace('−', '-').replace('+', ''))));
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a)); // largest change first
    expect(await page.locator('[data-testid="diff"] tr.change, [data-testid="diff"] tr.add').count()).toBeGreaterThan(
      0,
    );
    expect(await page.textContent('[data-testid="repeats"]')).toMatch(
      /^Repeats compared: candidate 1, incumbent 1\. Scores as the gate compared them\.$/,
    );
    await page.screenshot({ path: path.join(output, 'experiment.png'), fullPage: true });
  });

  it('the versions page shows a diff; activating a version is refused without the token and recorded with it', async () => {
    const before = (await history(dir)).registryEvents.length;
    const status = async (): Promise<number> =>
      (JSON.parse((await kloop('status', dir, '--json')).stdout) as { activeVersion: number }).activeVersion;
    const active = await status();
    // A study that has not run yet has no version: the page says so (no diff of nothing).
    await page.route('**/api/versions', (route) =>
      route.fulfill({ json: { activeVersion: null, versions: [], registryEvents: [] } }),
    );
    await open('#/versions', 'versions');
    expect(await page.textContent('[data-testid="no-versions"]')).toMatch(
      /^No version yet: the first `kloop run` stores the seed/,
    );
    await page.unroute('**/api/versions');
    await page.reload();
    await page.waitForSelector('main [data-page="versions"] [data-testid="diff"]');
    expect(
      await page
        .locator('[data-testid="diff"] tr.change, [data-testid="diff"] tr.add, [data-testid="diff"] tr.del')
        .count(),
    ).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(output, 'versions.png'), fullPage: true });

    await page.click('button[data-activate="1"]');
    await page.waitForSelector('#decision-dialog[open]');
    await page.fill('#decision-by', 'Test Reviewer');
    await page.fill('#decision-token', '');
    await page.click('#decision-confirm');
    await expect.poll(() => page.textContent('#decision-error')).toMatch(/Refused \(401\)/);
    expect(await status()).toBe(active);
    await page.screenshot({ path: path.join(output, 'activate-refused.png') });

    await page.fill('#decision-token', TOKEN);
    await page.click('#decision-confirm');
    await page.waitForSelector('[data-testid="notice"]');
    expect(await page.textContent('[data-testid="notice"]')).toContain(
      `Version 1 is active (rolled back from v${active})`,
    );
    expect(await status()).toBe(1);
    // The header follows, also when the notebook's change was heard while the dialog was still open.
    await expect.poll(() => page.textContent('#status')).toMatch(/^active v1/);
    const { registryEvents } = await history(dir);
    expect(registryEvents).toHaveLength(before + 1);
    expect(registryEvents.at(-1)).toMatchObject({ version: 1, actor: 'Test Reviewer' });
    expect((await kloop('history', dir)).stdout).toMatch(
      /v1\s+activated by Test Reviewer \(rollback from version \d+\)\s+Test Reviewer/,
    );
    await page.screenshot({ path: path.join(output, 'versions-after-rollback.png'), fullPage: true });
  });

  it('the review queue decides with a name and the token; the corpus and signals pages draw their charts', async () => {
    // Findings of Loop C and D, and production signals with a cluster of low-confidence assemblies.
    const db = await openDatabase(studyDatabasePath(dir));
    try {
      await enqueueReviewItem(db, {
        kind: 'example',
        source: 'loop-c',
        title: 'booking with pets: a shape missing from the corpus',
        payload: {
          example: {
            id: 'booking-pets-01',
            goal: 'a kennel where owners book stays for their pets',
            expected: { appType: 'booking' },
          },
        },
        evidence: { signals: 12, share: 0.4 },
      });
      await enqueueReviewItem(db, {
        kind: 'pattern',
        source: 'loop-d',
        title: 'pattern booking-kennel for 6 low-confidence assemblies',
        payload: { name: 'booking-kennel', yaml: 'id: booking-kennel\n' },
        evidence: { cluster: 'booking|commitments|4-6', size: 6 },
      });
      const now = Date.now();
      await storeSignals(
        db,
        Array.from({ length: 6 }, (_, index) => ({
          id: `browser-test-${index}`,
          time: new Date(now - (index + 1) * 3_600_000).toISOString(),
          assemblyMethod: 'decomposed' as const,
          confidence: 0.5,
          appClass: 'booking',
          hasCommitments: true,
          entityCount: 5,
          artifactVersion: 'v1',
          uncoveredEntities: ['Kennel', 'Pet'],
          patterns: ['booking'],
        })),
        { source: 'ingest' },
      );
    } finally {
      await db.destroy();
    }
    await open('#/review', 'review');
    expect(await page.locator('[data-review-item]').count()).toBe(2);
    await page.screenshot({ path: path.join(output, 'review.png'), fullPage: true });
    const example = page.locator('[data-review-item]', { hasText: 'booking with pets' });
    await example.locator('button[data-review-action="reject"]').click();
    await page.waitForSelector('#decision-dialog[open]');
    await page.fill('#decision-by', '');
    await page.click('#decision-confirm');
    await expect.poll(() => page.textContent('#decision-error')).toMatch(/name is required/);
    await page.fill('#decision-by', 'Test Reviewer');
    await page.fill('#decision-note', 'too close to booking-vet-05');
    await page.fill('#decision-token', TOKEN);
    await page.click('#decision-confirm');
    await page.waitForSelector('[data-testid="notice"]');
    expect(await page.textContent('[data-testid="notice"]')).toMatch(/rejected by Test Reviewer/);
    expect(
      query<{ status: string; decided_by: string; note: string }>(
        dir,
        "select status, decided_by, note from review_items where title like 'booking with pets%'",
      ),
    ).toEqual({ status: 'rejected', decided_by: 'Test Reviewer', note: 'too close to booking-vet-05' });
    expect(await page.locator('[data-review-item]').count()).toBe(1); // the pending list

    await open('#/corpus', 'corpus');
    const corpusCharts = await page.evaluate(() =>
      ['partition-sizes-chart', 'exposures-chart'].map(
        (id) => (window as unknown as { Chart: { getChart(id: string): unknown } }).Chart.getChart(id) !== undefined,
      ),
    );
    expect(corpusCharts).toEqual([true, true]);
    await page.screenshot({ path: path.join(output, 'corpus.png'), fullPage: true });
    await open('#/signals', 'signals');
    expect(await page.locator('main table tbody tr', { hasText: 'booking · commitments · 4-6' }).count()).toBe(1);
    await page.screenshot({ path: path.join(output, 'signals.png'), fullPage: true });
  });

  it(
    'while kloop run is in progress the overview shows new experiments without a reload',
    async () => {
      await open('#/overview', 'overview');
      const start = (await chartPoints(page)).length;
      await page.evaluate(() => ((window as unknown as { kloopNoReload: boolean }).kloopNoReload = true));
      const run = spawn(
        process.execPath,
        [path.join(repo, 'bin', 'kloop.js'), 'run', dir, '--max-experiments', String(start + 30), '--quiet'],
        { cwd: repo, stdio: 'ignore' },
      );
      const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
      try {
        // Freeze the run after its first new experiment: it is then certainly in progress.
        const evaluated = (): number =>
          query<{ n: number }>(dir, "select count(*) as n from experiments where decision <> 'skipped'").n;
        await until('a new experiment in the notebook', () => evaluated() > start, 120_000);
        run.kill('SIGSTOP');
        const frozen = evaluated();
        expect(query<{ open: number }>(dir, 'select count(*) as open from runs where ended_at is null').open).toBe(1);
        await until(`the chart to show ${frozen} points`, async () => (await chartPoints(page)).length === frozen);
        expect(await page.evaluate(() => (window as unknown as { kloopNoReload?: boolean }).kloopNoReload)).toBe(true);
        await page.screenshot({ path: path.join(output, 'overview-during-run.png'), fullPage: true });
      } finally {
        // Let it go on, then stop it as Ctrl-C would (its budget is far from spent): it records `interrupted` and exits 130.
        run.kill('SIGCONT');
        run.kill('SIGTERM');
      }
      expect(await exited).toBe(130);
      const final = (await history(dir)).experiments.filter((experiment) => experiment.composite !== null).length;
      expect(final).toBeGreaterThan(start);
      await until(`the chart to show all ${final} points`, async () => (await chartPoints(page)).length === final);
      expect(await page.evaluate(() => (window as unknown as { kloopNoReload?: boolean }).kloopNoReload)).toBe(true);
    },
    SLOW_MS,
  );

  it(
    "an online study (a SIMULATED outreach run): the table of experiments, Δ and its interval over looks, the checks' verdicts",
    async () => {
      const online = path.join(mkdtempSync(path.join(tmpdir(), 'kloop-view-online-')), 'outreach');
      cpSync(path.join(repo, 'examples', 'outreach'), online, {
        recursive: true,
        filter: (source) => !source.includes(`${path.sep}.kloop`),
      });
      expect((await kloop('run', online, '--simulate', '--days', '9', '--quiet')).code).toBe(0);
      const onlineViewer = spawn(
        process.execPath,
        [path.join(repo, 'bin', 'kloop.js'), 'view', online, '--simulated', '--port', '0'],
        { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      onlineViewer.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      try {
        const onlineUrl = await until('the online viewer to print its address', () =>
          onlineViewer.exitCode !== null
            ? Promise.reject(new Error(`kloop view exited: ${stderr}`))
            : /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stderr)?.[1],
        );
        const api = (await (await fetch(`${onlineUrl}/api/online`)).json()) as {
          experiments: Array<{ id: number; series: unknown[] }>;
        };
        // The study's default page is the online page; the offline pages are not offered.
        await page.goto(`${onlineUrl}/`);
        await page.waitForSelector('main [data-page="online"] [data-testid="online-table"]');
        expect(
          await page.locator('#nav a:not([hidden])').evaluateAll((links) => links.map((link) => link.textContent)),
        ).toEqual(['Online experiments', 'Versions']);
        expect(await page.textContent('main h1')).toBe('SIMULATED — Online experiments');
        expect(
          await page
            .locator('[data-testid="online-table"] tbody tr')
            .evaluateAll((rows) =>
              rows.map((row) => [row.getAttribute('data-online-experiment'), row.children[1]!.textContent]),
            ),
        ).toEqual([
          ['1', 'A/A'],
          ['2', 'A/B'],
        ]);
        // One chart per experiment, one point per stored look: Δ, and the interval's two ends.
        const drawn = await until('the look charts', async () => {
          const series = await page.evaluate(
            (ids) =>
              ids.map((id) => {
                const chart = (
                  window as unknown as {
                    Chart: {
                      getChart(
                        id: string,
                      ): { data: { datasets: Array<{ kloopRole?: string; data: Array<number | null> }> } } | undefined;
                    };
                  }
                ).Chart.getChart(`online-chart-${id}`);
                return chart === undefined
                  ? null
                  : Object.fromEntries(chart.data.datasets.map((dataset) => [dataset.kloopRole, dataset.data.length]));
              }),
            api.experiments.map((experiment) => experiment.id),
          );
          return series.every((entry) => entry !== null) ? series : null;
        });
        expect(drawn).toEqual(
          api.experiments.map((experiment) => ({
            delta: experiment.series.length,
            upper: experiment.series.length,
            lower: experiment.series.length,
            zero: experiment.series.length,
          })),
        );
        const calibration = page.locator('[data-testid="online-experiment"][data-experiment="1"]');
        expect(
          await calibration
            .locator('[data-testid="online-checks"] tbody tr')
            .evaluateAll((rows) => rows.map((row) => [row.getAttribute('data-check'), row.children[1]!.textContent])),
        ).toEqual([
          ['srm', 'pass'],
          ['harm', 'pass'],
          ['minimum_units', 'pass'],
          ['primary', 'wait'],
        ]);
        expect(await calibration.locator('[data-testid="online-looks"] tbody tr').count()).toBe(
          api.experiments[0]!.series.length,
        );
        await page.screenshot({ path: path.join(output, 'online.png'), fullPage: true });
        // One experiment's page.
        await page.click('[data-testid="online-table"] tr[data-online-experiment="2"] a');
        await expect.poll(() => page.evaluate(() => window.location.hash)).toBe('#/online/2');
        await expect
          .poll(() =>
            page
              .locator('[data-testid="online-experiment"]')
              .evaluateAll((cards) => cards.map((card) => card.getAttribute('data-experiment'))),
          )
          .toEqual(['2']);
        await page.screenshot({ path: path.join(output, 'online-experiment.png'), fullPage: true });
      } finally {
        // Leave the page first: its event stream would try to reconnect to the stopped viewer (console errors).
        await page.goto('about:blank');
        const exited = new Promise((resolve) => onlineViewer.once('exit', resolve));
        onlineViewer.kill('SIGTERM');
        await exited;
        rmSync(path.dirname(online), { recursive: true, force: true });
      }
    },
    SLOW_MS,
  );

  it('kloop report --format html writes one file that opens offline with its charts', async () => {
    const file = path.join(output, 'report.html');
    expect((await kloop('report', dir, '--format', 'html', '--out', file, '--quiet')).code).toBe(0);
    const requests: string[] = [];
    await page.goto('about:blank'); // the viewer's page would try to reconnect its event stream while offline
    const offline = await context.newPage();
    offline.on('request', (request) => requests.push(request.url()));
    await context.setOffline(true);
    try {
      await offline.goto(`file://${file}`);
      await offline.waitForSelector('main [data-page="overview"]');
      const { experiments } = await history(dir);
      await until('the report chart', async () => (await chartPoints(offline)).length === experiments.length);
      await offline.screenshot({ path: path.join(output, 'report-overview.png'), fullPage: true });
      const accepted = experiments.find((experiment) => experiment.decision === 'accepted')!;
      await offline.click(`tr[data-experiment="${accepted.id}"]`);
      await offline.waitForSelector(`main [data-page="experiment"][data-experiment="${accepted.id}"]`);
      expect(await offline.locator('[data-testid="checks"] tbody tr').count()).toBe(6);
      await offline.screenshot({ path: path.join(output, 'report-experiment.png'), fullPage: true });
    } finally {
      await context.setOffline(false);
      await offline.close();
    }
    expect(requests.every((request) => request.startsWith('file://'))).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
