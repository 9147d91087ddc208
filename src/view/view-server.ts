/**
 * The local web viewer of a study (`kloop view`), built on Hono with
 * `@hono/node-server`. It serves static pages (`src/view/pages/`, plain
 * scripts, no build step) that draw their charts with Chart.js's prebuilt
 * browser bundle from `node_modules/chart.js/dist`, and a JSON API read from
 * the study's notebook:
 *
 * - `GET /api/study`, `/api/overview`, `/api/experiments/:id`, `/api/versions`,
 *   `/api/diff?a=ID&b=ID`, `/api/corpus`, `/api/review`, `/api/signals`;
 * - `GET /api/online` for an online study (`mode: online`): every online
 *   experiment's arms, units, lift, interval and checks, with the series of
 *   its stored looks (src/online/study/online-view.ts; 404 for other studies);
 * - `GET /api/events`: server-sent events; a `change` event whenever the
 *   notebook changed (a run recorded an experiment, a version was activated,
 *   a review decided...), so the pages update while a run is in progress;
 * - `POST /api/versions/:id/activate` `{ by, note? }`: the rollback;
 *   `POST /api/review/:id/approve|reject` `{ by, note? }`.
 *
 * Safety: it listens on 127.0.0.1 unless told otherwise and answers only
 * requests whose Host is that address (no DNS rebinding). It is read-only
 * unless started with a bearer token (the rules of `kloop serve`: at least 16
 * characters, from an environment variable): without one every POST gets
 * 403; with one a POST needs `Authorization: Bearer <token>` (401 otherwise,
 * compared in constant time) and, when it has an `Origin`, the viewer's own
 * (`Origin: null`, a sandboxed or file:// page's, is refused: 403).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { csrf } from 'hono/csrf';
import { secureHeaders } from 'hono/secure-headers';
import { HTTPException } from 'hono/http-exception';
import { streamSSE } from 'hono/streaming';
import { InputError } from '../errors.ts';
import type { StudyDatabase } from '../storage/database.ts';
import type { ActivationResult } from '../storage/activation.ts';
import { activateVersionExclusive } from '../storage/activation.ts';
import { getRegistryVersion, getVersion } from '../storage/registry.ts';
import { approveReviewItem, rejectReviewItem } from '../review/review-queue.ts';
import { loadExperimentDetail } from './experiment-detail.ts';
import { loadEvaluationIndex, loadExperimentScores } from './experiment-scores.ts';
import { loadRunInProgress, loadStudyOverview } from './study-overview.ts';
import type { CorpusPage } from './study-pages.ts';
import { loadCorpusPage, loadReviewPage, loadVersionsPage } from './study-pages.ts';
import { diffTexts } from './text-diff.ts';
import { notebookVersion } from './notebook-version.ts';
import { readDecision } from './decision-body.ts';

export { notebookVersion };
import { chartBundlePath, pagesFolder } from './page-assets.ts';

/** Shortest bearer token accepted (as `kloop serve`). */
export const MIN_VIEW_TOKEN_CHARACTERS = 16;

/** Default port of `kloop view`. */
export const DEFAULT_VIEW_PORT = 8790;

/** How often the server looks for changes in the notebook, in milliseconds. Default 1000. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;

/** Options of {@link createViewApp}. */
export interface ViewAppOptions {
  db: StudyDatabase;
  /** The study folder (absolute). */
  studyDir: string;
  /** The bearer token that unlocks changes; null = read-only. */
  token: string | null;
  /**
   * Why the notebook cannot be written (a study folder this process may not
   * write, opened read-only), or absent when it can: every change is then
   * refused (403) with this reason, token or not.
   */
  readOnlyNotebook?: string;
  /** corpusPolicy of the study, for the corpus page. */
  corpusPolicy?: CorpusPage['policy'];
  /** The study's headline figure (see `StudyOverview.headline`); default the composite. */
  headline?: { name: string; complement: boolean };
  /** Loop D's report of the rolling window (the signals page); absent = not available. */
  loadSignals?: () => Promise<unknown>;
  /**
   * An online study's experiments with their looks (`GET /api/online`, the
   * online page; src/online/study/online-view.ts); absent = not an online study.
   */
  loadOnline?: () => Promise<unknown>;
  /** True when the notebook is a simulated run's (`kloop view --simulated`): the pages label it SIMULATED. Default false. */
  simulated?: boolean;
  /** Runs after an activation that moved the pointer, while the study's lease is still held (e.g. the git mirror's sync). */
  afterActivation?: (result: Extract<ActivationResult, { ok: true }>) => Promise<void>;
  /** Host names accepted in the Host header. Default the loopback names. */
  allowedHosts?: readonly string[];
  pollIntervalMs?: number;
  now?: () => Date;
}

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]', '::1'];

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

/** A running app and what it holds (the change poller). */
export interface ViewApp {
  app: Hono;
  /** Stops the change poller and ends the event streams. */
  close(): void;
}

/** Builds the viewer's Hono app (no socket: serve it with {@link startViewServer} or call `app.request`). */
export function createViewApp(options: ViewAppOptions): ViewApp {
  if (options.token !== null && options.token.length < MIN_VIEW_TOKEN_CHARACTERS) {
    throw new InputError(`the bearer token must have at least ${MIN_VIEW_TOKEN_CHARACTERS} characters`, {
      field: 'token',
    });
  }
  const { db, studyDir } = options;
  const pages = pagesFolder();
  const chartBundle = chartBundlePath();
  const allowedHosts = new Set((options.allowedHosts ?? LOOPBACK_HOSTS).map((host) => host.toLowerCase()));
  const app = new Hono();

  // Change notification: one poller for every open event stream.
  const listeners = new Set<(version: string) => void>();
  let lastVersion: string | null = null;
  let polling = false;
  const poll = async (): Promise<void> => {
    if (polling || listeners.size === 0) return;
    polling = true;
    try {
      const version = await notebookVersion(db);
      if (version !== lastVersion) {
        lastVersion = version;
        for (const listener of listeners) listener(version);
      }
    } catch {
      // the database is busy or gone for a moment: look again at the next tick
    } finally {
      polling = false;
    }
  };
  const timer = setInterval(() => void poll(), options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  timer.unref();
  const closers = new Set<() => void>();

  app.use('*', async (context, next) => {
    const host = (context.req.header('host') ?? '').toLowerCase().replace(/:\d+$/, '');
    if (!allowedHosts.has(host))
      return context.json(
        { error: 'forbidden_host', message: `this viewer answers only on ${[...allowedHosts].join(', ')}` },
        403,
      );
    await next();
  });
  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        frameAncestors: ["'none'"],
      },
      crossOriginEmbedderPolicy: false,
    }),
  );
  app.use('/api/*', async (context, next) => {
    await next();
    context.header('Cache-Control', 'no-store');
  });

  // Writes: refused when read-only, else bearer token and same origin.
  const bearer = options.token === null ? null : bearerAuth({ token: options.token, realm: 'kloop' });
  const readOnlyNotebook = options.readOnlyNotebook;
  app.use('/api/*', async (context, next) => {
    if (context.req.method === 'GET' || context.req.method === 'HEAD') return next();
    if (readOnlyNotebook !== undefined) return context.json({ error: 'read_only', message: readOnlyNotebook }, 403);
    if (bearer === null) {
      return context.json(
        {
          error: 'read_only',
          message:
            'this viewer is read-only: start `kloop view` with a bearer token (KLOOP_VIEW_TOKEN, or the variable named by --token-env) to activate versions or decide reviews',
        },
        403,
      );
    }
    return bearer(context, next);
  });
  app.use('/api/*', csrf());
  // hono's csrf() looks at form-like bodies only: a change sent from a page of another origin (an Origin that is
  // not this viewer's own address) is refused whatever its content type. `Origin: null` is another origin too: the
  // opaque origin a browser sends from a sandboxed frame, a file:// or data: page, or after a cross-origin redirect
  // (RFC 6454 §7.3). A request with no Origin at all comes from no browser page (curl, a script) and is let through.
  app.use('/api/*', async (context, next) => {
    if (context.req.method === 'GET' || context.req.method === 'HEAD') return next();
    const origin = context.req.header('origin');
    if (origin !== undefined) {
      let host: string;
      try {
        host = origin.trim() === 'null' ? '' : new URL(origin).host.toLowerCase();
      } catch {
        host = '';
      }
      if (host === '' || host !== (context.req.header('host') ?? '').toLowerCase()) {
        return context.json(
          { error: 'forbidden_origin', message: "changes are accepted only from the viewer's own pages" },
          403,
        );
      }
    }
    return next();
  });
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: 64 * 1024,
      onError: (context) => context.json({ error: 'payload_too_large', message: 'the body exceeds 64 KiB' }, 413),
    }),
  );

  const scoresNow = async () => {
    const index = await loadEvaluationIndex(db);
    return { index, scores: await loadExperimentScores(db, index) };
  };

  app.get('/api/study', async (context) => {
    return context.json({
      study: studyDir,
      name: path.basename(studyDir),
      writable: options.token !== null && readOnlyNotebook === undefined,
      // Why changes are refused, when they are.
      readOnly:
        readOnlyNotebook ??
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
    return context.json(await loadExperimentDetail(db, index, score));
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
    void poll();
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
    void poll();
    if (!result.ok)
      return context.json({ error: result.reason, message: result.message }, result.reason === 'not_found' ? 404 : 409);
    return context.json({ ok: true, item: result.item });
  });

  app.get('/api/events', (context) =>
    streamSSE(context, async (stream) => {
      let open = true;
      const finished = new Promise<void>((resolve) => {
        const end = (): void => {
          open = false;
          listeners.delete(send);
          closers.delete(end);
          resolve();
        };
        closers.add(end);
        stream.onAbort(end);
      });
      const send = (version: string): void => {
        if (open) void stream.writeSSE({ event: 'change', data: version }).catch(() => undefined);
      };
      listeners.add(send);
      const current = lastVersion ?? (await notebookVersion(db).catch(() => 'unknown'));
      lastVersion ??= current;
      await stream.writeSSE({ event: 'hello', data: current });
      const keepAlive = setInterval(() => {
        if (open) void stream.write(': keep-alive\n\n').catch(() => undefined);
      }, 15_000);
      await finished;
      clearInterval(keepAlive);
    }),
  );

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

  app.notFound((context) => context.json({ error: 'not_found', message: 'no such page or API route' }, 404));
  app.onError((error, context) => {
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
  });

  return {
    app,
    close: () => {
      clearInterval(timer);
      for (const end of [...closers]) end();
    },
  };
}

/** Options of {@link startViewServer}. */
export interface ViewServerOptions extends ViewAppOptions {
  /** Port; 0 picks a free one. Default 8790. */
  port?: number;
  /** Interface to listen on. Default 127.0.0.1. */
  hostname?: string;
}

/** A running viewer. */
export interface ViewServer {
  /** Base URL, e.g. `http://127.0.0.1:8790`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the viewer and resolves once it listens.
 *
 * @throws InputError when the token is too short; the listen error (e.g. EADDRINUSE) otherwise
 */
export function startViewServer(options: ViewServerOptions): Promise<ViewServer> {
  const hostname = options.hostname ?? '127.0.0.1';
  const allowedHosts =
    options.allowedHosts ??
    (LOOPBACK_HOSTS.includes(hostname)
      ? LOOPBACK_HOSTS
      : [...LOOPBACK_HOSTS, hostname.includes(':') ? `[${hostname}]` : hostname]);
  const view = createViewApp({ ...options, allowedHosts });
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: view.app.fetch, port: options.port ?? DEFAULT_VIEW_PORT, hostname },
      (info: AddressInfo) => {
        server.off('error', reject);
        const host = info.family === 'IPv6' || hostname.includes(':') ? `[${info.address}]` : info.address;
        resolve({
          url: `http://${host}:${info.port}`,
          port: info.port,
          close: () =>
            new Promise<void>((done, fail) => {
              view.close();
              server.close((error) => (error === undefined ? done() : fail(error)));
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
    server.once('error', (error) => {
      view.close();
      reject(error);
    });
  });
}
