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
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { InputError } from '../errors.ts';
import { notebookVersion } from './notebook-version.ts';
import type { ViewAppOptions } from './view-app-options.ts';
import { createChangeFeed } from './view-change-feed.ts';
import { installRequestGuards, installWriteGuards } from './view-guards.ts';
import {
  registerPageRoutes,
  registerStaticRoutes,
  registerStudyRoutes,
  registerWriteRoutes,
  viewErrorResponse,
} from './view-routes.ts';

export { notebookVersion };
export type { ViewAppOptions } from './view-app-options.ts';

/** Shortest bearer token accepted (as `kloop serve`). */
export const MIN_VIEW_TOKEN_CHARACTERS = 16;

/** Default port of `kloop view`. */
export const DEFAULT_VIEW_PORT = 8790;

/** How often the server looks for changes in the notebook, in milliseconds. Default 1000. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]', '::1'];

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
  const allowedHosts = new Set((options.allowedHosts ?? LOOPBACK_HOSTS).map((host) => host.toLowerCase()));
  const app = new Hono();
  const changes = createChangeFeed(options.db, options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  installRequestGuards(app, allowedHosts);
  installWriteGuards(app, options.token, options.readOnlyNotebook);
  registerStudyRoutes(app, options);
  registerPageRoutes(app, options);
  registerWriteRoutes(app, options, changes.poll);
  app.get('/api/events', (context) => changes.stream(context));
  registerStaticRoutes(app);
  app.notFound((context) => context.json({ error: 'not_found', message: 'no such page or API route' }, 404));
  app.onError(viewErrorResponse);
  return { app, close: changes.close };
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
