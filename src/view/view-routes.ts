/**
 * The viewer's routes (`kloop view`, src/view/view-server.ts): the JSON API
 * read from the notebook, the two changes (activate a version, decide a
 * review item), the static pages and the error answers.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { InputError } from '../errors.ts';
import { activateVersionExclusive } from '../storage/activation.ts';
import { getRegistryVersion, getVersion } from '../storage/registry.ts';
import { approveReviewItem, rejectReviewItem } from '../review/review-queue.ts';
import { readDecision } from './decision-body.ts';
import { loadExperimentDetail } from './experiment-detail.ts';
import { loadEvaluationIndex, loadExperimentScores } from './experiment-scores.ts';
import { chartBundlePath, pagesFolder } from './page-assets.ts';
import { loadRunInProgress, loadStudyOverview } from './study-overview.ts';
import { loadCorpusPage, loadReviewPage, loadVersionsPage } from './study-pages.ts';
import { diffTexts } from './text-diff.ts';
import type { ViewAppOptions } from './view-app-options.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

function parseId(value: string | undefined, field: string): number {
  const id = Number(value);
  if (value === undefined || !Number.isInteger(id) || id < 1)
    throw new InputError(`expected a whole number ≥ 1, got "${value ?? ''}"`, { field });
  return id;
}

/** `GET /api/study`, `/api/overview`, `/api/experiments/:id`, `/api/versions`, `/api/diff`. */
export function registerStudyRoutes(app: Hono, options: ViewAppOptions): void {
  const { db, studyDir } = options;
  const scoresNow = async () => {
    const index = await loadEvaluationIndex(db);
    return { index, scores: await loadExperimentScores(db, index) };
  };
  app.get('/api/study', async (context) => {
    return context.json({
      study: studyDir,
      name: path.basename(studyDir),
      writable: options.token !== null && options.readOnlyNotebook === undefined,
      // Why changes are refused, when they are.
      readOnly:
        options.readOnlyNotebook ??
        (options.token === null
          ? 'This viewer is read-only: it was started without a token, so every change is refused.'
          : null),
      activeVersion: (await getRegistryVersion(db, 'active'))?.id ?? null,
      runInProgress: await loadRunInProgress(db, studyDir, options.now),
      signals: options.loadSignals !== undefined,
      online: options.loadOnline !== undefined,
      simulated: options.simulated === true,
    });
  });
  app.get('/api/overview', async (context) =>
    context.json(
      await loadStudyOverview(db, {
        studyDir,
        ...(options.now !== undefined ? { now: options.now } : {}),
        ...(options.headline !== undefined ? { headline: options.headline } : {}),
      }),
    ),
  );
  app.get('/api/experiments/:id', async (context) => {
    const id = parseId(context.req.param('id'), 'experiment');
    const { index, scores } = await scoresNow();
    const score = scores.find((candidate) => candidate.id === id);
    if (score === undefined)
      return context.json({ error: 'not_found', message: `no experiment ${id} in this study` }, 404);
    return context.json(await loadExperimentDetail(db, index, score, options.headline));
  });
  app.get('/api/versions', async (context) => {
    const { index, scores } = await scoresNow();
    return context.json(await loadVersionsPage(db, index, scores));
  });
  app.get('/api/diff', async (context) => {
    const left = await getVersion(db, parseId(context.req.query('a'), 'a'));
    const right = await getVersion(db, parseId(context.req.query('b'), 'b'));
    if (left === undefined || right === undefined)
      return context.json({ error: 'not_found', message: 'no such version' }, 404);
    return context.json({ a: left.id, b: right.id, ...diffTexts(left.text, right.text) });
  });
}

/** `GET /api/corpus`, `/api/review`, `/api/signals` and `/api/online` (404 when the study has no such page). */
export function registerPageRoutes(app: Hono, options: ViewAppOptions): void {
  const { db } = options;
  app.get('/api/corpus', async (context) => context.json(await loadCorpusPage(db, options.corpusPolicy ?? null)));
  app.get('/api/review', async (context) => context.json(await loadReviewPage(db)));
  app.get('/api/signals', async (context) => {
    if (options.loadSignals === undefined)
      return context.json({ error: 'not_available', message: 'signals are not available for this study' }, 404);
    return context.json(await options.loadSignals());
  });
  app.get('/api/online', async (context) => {
    if (options.loadOnline === undefined)
      return context.json({ error: 'not_available', message: 'not an online study (mode: online in kloop.yaml)' }, 404);
    return context.json(await options.loadOnline());
  });
}

/** `POST /api/versions/:id/activate` and `POST /api/review/:id/approve|reject`; `changed` runs after each (the change poller). */
export function registerWriteRoutes(app: Hono, options: ViewAppOptions, changed: () => Promise<void>): void {
  const { db, studyDir } = options;
  app.post('/api/versions/:id/activate', async (context) => {
    const versionId = parseId(context.req.param('id'), 'version');
    const decision = await readDecision(context);
    const result = await activateVersionExclusive(
      db,
      studyDir,
      {
        versionId,
        actor: decision.by,
        ...(decision.note !== undefined ? { note: decision.note } : {}),
        ...(options.now !== undefined ? { now: options.now } : {}),
      },
      options.afterActivation !== undefined ? { whileHeld: options.afterActivation } : {},
    );
    if (!result.ok)
      return context.json({ error: result.reason, message: result.message }, result.reason === 'not_found' ? 404 : 409);
    void changed();
    return context.json({
      ok: true,
      versionId: result.version.id,
      previousVersionId: result.previousVersionId,
      changed: result.changed,
      rollback: result.rollback,
      event: result.event,
    });
  });
  app.post('/api/review/:id/:action', async (context) => {
    const id = parseId(context.req.param('id'), 'review item');
    const action = context.req.param('action');
    if (action !== 'approve' && action !== 'reject')
      return context.json({ error: 'not_found', message: 'use /approve or /reject' }, 404);
    const decision = await readDecision(context);
    const decide = action === 'approve' ? approveReviewItem : rejectReviewItem;
    const result = await decide(db, id, {
      ...decision,
      studyDir,
      ...(options.now !== undefined ? { now: () => options.now!() } : {}),
    });
    void changed();
    if (!result.ok)
      return context.json({ error: result.reason, message: result.message }, result.reason === 'not_found' ? 404 : 409);
    return context.json({ ok: true, item: result.item });
  });
}

/** The pages (`/`, their scripts and styles) and Chart.js's browser bundle. */
export function registerStaticRoutes(app: Hono): void {
  const pages = pagesFolder();
  const chartBundle = chartBundlePath();
  const serveFile = (file: string, type: string, context: Context) => {
    const body = readFileSync(file);
    return context.body(body, 200, { 'Content-Type': type, 'Cache-Control': 'no-cache' });
  };
  app.get('/', (context) => serveFile(path.join(pages, 'index.html'), CONTENT_TYPES['.html']!, context));
  app.get('/vendor/chart.umd.min.js', (context) => serveFile(chartBundle, CONTENT_TYPES['.js']!, context));
  app.get('/:file{[a-z-]+\\.(js|css)}', (context) => {
    const name = context.req.param('file');
    const file = path.join(pages, name);
    if (!existsSync(file)) return context.json({ error: 'not_found', message: `no page file ${name}` }, 404);
    return serveFile(file, CONTENT_TYPES[path.extname(name)]!, context);
  });
}

/** The answer to an error: 400 bad input, 401 no or wrong token, 403 read-only notebook, else the HTTP status or 500. */
export function viewErrorResponse(error: Error, context: Context): Response {
  if (InputError.isInstance(error)) return context.json({ error: 'bad_input', message: error.message }, 400);
  if (error instanceof HTTPException && (error.status === 401 || error.status === 400)) {
    context.header('WWW-Authenticate', 'Bearer realm="kloop"');
    return context.json(
      {
        error: 'unauthorized',
        message:
          "the viewer's bearer token is missing or wrong (send Authorization: Bearer <token>, the value of the variable kloop view was started with)",
      },
      401,
    );
  }
  if (error instanceof HTTPException) return context.json({ error: 'refused', message: error.message }, error.status);
  // The notebook turned out not to be writable (its file or folder lost write permission while the viewer ran).
  if (String((error as { code?: unknown }).code ?? '').startsWith('SQLITE_READONLY')) {
    return context.json(
      {
        error: 'read_only',
        message: `the study's notebook cannot be written (${String((error as { code?: unknown }).code)}): nothing was recorded`,
      },
      403,
    );
  }
  return context.json({ error: 'internal', message: `the viewer failed: ${error.message}` }, 500);
}
