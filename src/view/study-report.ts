/**
 * Reports to share (`kloop report`): the study as one JSON object, as CSV
 * with one row per experiment, or as one self-contained HTML file — the
 * viewer's pages with Chart.js, the page scripts, the styles and the data all
 * inlined, so that it opens offline (attach it to a pull request or a ticket).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { StudyDatabase } from '../storage/study-database.ts';
import { readVersionTexts } from '../storage/notebook/view-queries.ts';
import type { ExperimentDetail } from './experiment-detail.ts';
import { loadExperimentDetail } from './experiment-detail.ts';
import type { ExperimentScore } from './experiment-scores.ts';
import { loadEvaluationIndex, loadExperimentScores } from './experiment-scores.ts';
import type { StudyOverview } from './study-overview.ts';
import { loadStudyOverview } from './study-overview.ts';
import type { CorpusPage, VersionsPage } from './study-pages.ts';
import { loadCorpusPage, loadReviewPage, loadVersionsPage } from './study-pages.ts';
import type { TextDiff } from './text-diff.ts';
import { diffTexts } from './text-diff.ts';
import { PAGE_SCRIPTS, chartBundlePath, pagesFolder } from './page-assets.ts';

/** Report formats of `kloop report`. */
export const REPORT_FORMATS = ['html', 'csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** Versions up to which the HTML report holds the diff of every pair (beyond: each version against its parent, the seed and the active one). */
export const ALL_PAIRS_UP_TO_VERSIONS = 12;

/** Everything a report shows, read once from the notebook. */
export interface StudyReportData {
  study: string;
  generatedAt: string;
  overview: StudyOverview;
  experiments: ExperimentDetail[];
  versions: VersionsPage;
  /** Diffs by "a..b" version ids. */
  diffs: Record<string, TextDiff & { a: number; b: number }>;
  corpus: CorpusPage;
  review: Awaited<ReturnType<typeof loadReviewPage>>;
  /** Loop D's report of the window, when given. */
  signals: unknown;
}

/** Options of {@link loadReportData}. */
export interface ReportDataOptions {
  studyDir: string;
  corpusPolicy?: CorpusPage['policy'];
  loadSignals?: () => Promise<unknown>;
  now?: () => Date;
  /** The study's headline figure (see `StudyOverview.headline`). */
  headline?: { name: string; complement: boolean };
}

function diffPairs(versions: VersionsPage): Array<[number, number]> {
  const ids = versions.versions.map((version) => version.id);
  const pairs = new Set<string>();
  if (ids.length <= ALL_PAIRS_UP_TO_VERSIONS) {
    for (const a of ids) for (const b of ids) if (a !== b) pairs.add(`${a}..${b}`);
  } else {
    const seed = versions.versions.find((version) => version.source === 'seed')?.id ?? ids[0]!;
    const active = versions.activeVersion ?? ids.at(-1)!;
    for (const version of versions.versions) {
      if (version.parentId !== null) pairs.add(`${version.parentId}..${version.id}`);
      for (const other of [seed, active])
        if (other !== version.id) pairs.add(`${other}..${version.id}`).add(`${version.id}..${other}`);
    }
  }
  return [...pairs].map((pair) => pair.split('..').map(Number) as [number, number]);
}

/** Reads everything a report shows. */
export async function loadReportData(db: StudyDatabase, options: ReportDataOptions): Promise<StudyReportData> {
  const now = options.now ?? (() => new Date());
  const index = await loadEvaluationIndex(db);
  const scores: ExperimentScore[] = await loadExperimentScores(db, index);
  const overview = await loadStudyOverview(db, {
    studyDir: options.studyDir,
    now,
    scores,
    index,
    ...(options.headline !== undefined ? { headline: options.headline } : {}),
  });
  const experiments: ExperimentDetail[] = [];
  for (const score of scores) experiments.push(await loadExperimentDetail(db, index, score, options.headline));
  const versions = await loadVersionsPage(db, index, scores);
  const texts = await readVersionTexts(db);
  const diffs: StudyReportData['diffs'] = {};
  for (const [a, b] of diffPairs(versions))
    diffs[`${a}..${b}`] = { a, b, ...diffTexts(texts.get(a) ?? '', texts.get(b) ?? '') };
  return {
    study: options.studyDir,
    generatedAt: now().toISOString(),
    overview,
    experiments,
    versions,
    diffs,
    corpus: await loadCorpusPage(db, options.corpusPolicy ?? null),
    review: await loadReviewPage(db),
    signals: options.loadSignals === undefined ? null : await options.loadSignals(),
  };
}

/** The JSON report: the overview, every experiment in full, versions, corpus and review queue. */
export function renderJsonReport(data: StudyReportData): string {
  const { overview, diffs: _diffs, ...rest } = data;
  const { experiments: _summaries, ...summary } = overview;
  return `${JSON.stringify({ ...rest, overview: summary }, null, 2)}\n`;
}

/** Columns of the CSV report, in order. */
export const CSV_COLUMNS = [
  'id',
  'run',
  'round',
  'proposer',
  'decision',
  'reason',
  'failed_check',
  'composite',
  'incumbent_composite',
  'composite_delta',
  'p_value',
  'welch_p_value',
  'anchor_candidate',
  'anchor_incumbent',
  'shadow_candidate',
  'shadow_incumbent',
  'base_version',
  'accepted_version',
  'executor_calls',
  'input_tokens',
  'output_tokens',
  'cost_usd',
  'examples_moved',
  'created_at',
  'delta',
] as const;

/** One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; empty for null. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The CSV report: a header and one row per experiment (a missing score is an empty field, never 0). */
export function renderCsvReport(data: StudyReportData): string {
  const failed = new Map(data.overview.experiments.map((experiment) => [experiment.id, experiment.failedCheck]));
  const rows = data.experiments.map((experiment) =>
    [
      experiment.id,
      experiment.run,
      experiment.round,
      experiment.proposer,
      experiment.decision,
      experiment.reason,
      failed.get(experiment.id) ?? null,
      experiment.composite,
      experiment.incumbentComposite,
      experiment.compositeDelta,
      experiment.pValue,
      experiment.welchPValue,
      experiment.candidate.anchor,
      experiment.incumbentBefore.anchor,
      experiment.candidate.shadow,
      experiment.incumbentBefore.shadow,
      experiment.baseVersion,
      experiment.acceptedVersion,
      experiment.usage.calls,
      experiment.usage.inputTokens,
      experiment.usage.outputTokens,
      experiment.usage.costUsd,
      experiment.changes.length,
      experiment.createdAt,
      experiment.delta,
    ]
      .map(csvField)
      .join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...rows].join('\r\n')}\r\n`;
}

/** JSON for a `<script>` element: `<` escaped so no text can close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function inlineScript(source: string): string {
  return `<script>\n${source.replace(/<\/(script)/gi, '<\\/$1')}\n</script>`;
}

/**
 * The HTML report: the viewer's page with everything inlined (no request to
 * any server: Chart.js, the scripts, the styles and the data are in the file).
 */
export function renderHtmlReport(data: StudyReportData): string {
  const folder = pagesFolder();
  const bundle: Record<string, unknown> = {
    '/api/overview': data.overview,
    '/api/versions': data.versions,
    '/api/corpus': data.corpus,
    '/api/review': data.review,
  };
  if (data.signals !== null) bundle['/api/signals'] = data.signals;
  for (const experiment of data.experiments) bundle[`/api/experiments/${experiment.id}`] = experiment;
  for (const [key, diff] of Object.entries(data.diffs)) {
    const [a, b] = key.split('..');
    bundle[`/api/diff?a=${a}&b=${b}`] = diff;
  }
  const report = { generatedAt: data.generatedAt, study: data.study, data: bundle };
  const page = readFileSync(path.join(folder, 'index.html'), 'utf8');
  const styles = readFileSync(path.join(folder, 'style.css'), 'utf8');
  const scripts = [
    inlineScript(readFileSync(chartBundlePath(), 'utf8')),
    `<script>window.KLOOP_REPORT = ${scriptJson(report)};</script>`,
    ...PAGE_SCRIPTS.map((name) => inlineScript(readFileSync(path.join(folder, name), 'utf8'))),
  ].join('\n');
  const title = `kloop report · ${path.basename(data.study)} · ${data.generatedAt.slice(0, 10)}`;
  return page
    .replace(
      /<title>[^<]*<\/title>/,
      `<title>${title.replace(/[<&]/g, (character) => (character === '<' ? '&lt;' : '&amp;'))}</title>`,
    )
    .replace(/<link rel="stylesheet"[^>]*>/, () => `<style>\n${styles}\n</style>`)
    .replace(/\s*<script src="[^"]*" defer><\/script>/g, '')
    .replace('</body>', () => `${scripts}\n</body>`);
}
