/**
 * The signal endpoint (`kloop serve`): production systems post signals over
 * HTTP. Built on Hono with `@hono/node-server`.
 *
 * - `POST /signals`: one signal object, an array of them, or JSON Lines
 *   (`Content-Type: application/x-ndjson`, `application/jsonl` or
 *   `text/plain`). A batch is all or nothing: if any signal is malformed the
 *   answer is 400 with every problem (`index`, `field`, `message`) and nothing
 *   is stored. Otherwise 200 `{ received, stored, duplicates }` (idempotent by
 *   id: a signal sent again is a duplicate, not stored twice).
 * - `GET /health`: 200 `{ ok: true }` (no token needed, still rate-limited).
 *
 * Safety: requires `Authorization: Bearer <token>` (401 without it or with a
 * wrong one; compared in constant time); bodies above `maxBodyBytes`
 * (default 1 MiB) get 413; each client (remote address) has a token bucket
 * (default 5 requests/s, burst 20) and gets 429 with `Retry-After` beyond it.
 * It listens on 127.0.0.1 unless told otherwise and speaks plain HTTP: put a
 * TLS-terminating proxy in front before exposing it.
 *
 * The endpoint only stores evidence: it never touches the prompt registry or
 * the artifact.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { InputError } from '../errors.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { formatSignalIssue } from './signal.ts';
import { parseSignalBody } from './parse-signals.ts';
import { storeSignals } from './signal-store.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../config/signals-config.ts';
import { createTokenBucketLimiter } from './token-bucket.ts';

/** The default environment variable holding the endpoint's bearer token. */
export const DEFAULT_TOKEN_ENV = 'KLOOP_SERVE_TOKEN';

/** Shortest bearer token accepted, in characters. */
export const MIN_TOKEN_CHARACTERS = 16;

/** Most issues returned in one 400 answer. */
const MAX_ISSUES_IN_ANSWER = 100;

/** Options of {@link createSignalApp}. */
export interface SignalAppOptions {
  db: StudyDatabase;
  /** The bearer token clients must send (at least 16 characters). */
  token: string;
  /** Store goal texts. Default true (`signals.storeGoals`). */
  storeGoals?: boolean;
  /** Largest body, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Token-bucket refill per client, requests per second. Default 5. */
  ratePerSecond?: number;
  /** Token-bucket capacity per client. Default 20. */
  burst?: number;
  now?: () => Date;
  /** Clock of the rate limiter in milliseconds. Default `Date.now`. */
  nowMs?: () => number;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Resolves the bearer token from the environment.
 *
 * @throws InputError when the variable is unset, empty or shorter than 16 characters
 */
export function resolveServeToken(env: NodeJS.ProcessEnv, tokenEnv = DEFAULT_TOKEN_ENV): string {
  const token = env[tokenEnv];
  if (token === undefined || token.trim() === '') {
    throw new InputError(
      `refusing to start without a bearer token: set the environment variable ${tokenEnv} (or name another with --token-env)`,
      { field: '--token-env' },
    );
  }
  if (token.trim().length < MIN_TOKEN_CHARACTERS) {
    throw new InputError(
      `the bearer token in ${tokenEnv} is too short: use at least ${MIN_TOKEN_CHARACTERS} characters (e.g. \`openssl rand -hex 32\`)`,
      { field: '--token-env' },
    );
  }
  return token.trim();
}

function clientOf(context: Context): string {
  try {
    return getConnInfo(context).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function isJsonLines(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return (
    type === 'application/x-ndjson' ||
    type === 'application/jsonl' ||
    type === 'application/x-jsonlines' ||
    type === 'text/plain'
  );
}

/** The guard of every kloop endpoint: options and the pieces a route needs. */
export interface GuardedApp {
  app: Hono;
  /** The body limit of a POST route (413 with `Connection: close` beyond it). */
  limitBody: ReturnType<typeof bodyLimit>;
  maxBodyBytes: number;
}

/**
 * A Hono app with the endpoint's guard: a token bucket per client on every
 * route (429 with `Retry-After`), `GET /health`, and the bearer token on
 * `protectedPaths` (401 without it). `kloop serve` builds the signal routes
 * on it, and for an online study `/assign` and `/outcomes`
 * (src/online/http/online-routes.ts): the same token and limits.
 */
export function createGuardedApp(
  options: Omit<SignalAppOptions, 'db' | 'storeGoals' | 'now'>,
  protectedPaths: readonly string[],
): GuardedApp {
  if (options.token.length < MIN_TOKEN_CHARACTERS)
    throw new InputError(`the bearer token must have at least ${MIN_TOKEN_CHARACTERS} characters`, { field: 'token' });
  const defaults = DEFAULT_SIGNALS_CONFIG.endpoint;
  const maxBodyBytes = options.maxBodyBytes ?? defaults.maxBodyBytes;
  const limiter = createTokenBucketLimiter({
    ratePerSecond: options.ratePerSecond ?? defaults.ratePerSecond,
    burst: options.burst ?? defaults.burst,
    ...(options.nowMs !== undefined ? { nowMs: options.nowMs } : {}),
  });
  const expected = digest(options.token);
  const app = new Hono();

  app.use('*', async (context, next) => {
    const decision = limiter.take(clientOf(context));
    if (!decision.allowed) {
      context.header('Retry-After', String(decision.retryAfterSeconds));
      return context.json(
        { error: 'rate_limited', message: `too many requests: retry after ${decision.retryAfterSeconds} s` },
        429,
      );
    }
    await next();
  });

  app.get('/health', (context) => context.json({ ok: true }));

  for (const protectedPath of protectedPaths) {
    app.use(protectedPath, async (context, next) => {
      const header = context.req.header('authorization') ?? '';
      const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
      if (match === null || !timingSafeEqual(digest(match[1]!), expected)) {
        context.header('WWW-Authenticate', 'Bearer realm="kloop"');
        return context.json({ error: 'unauthorized', message: 'send Authorization: Bearer <token>' }, 401);
      }
      await next();
    });
  }
  const limitBody = bodyLimit({
    maxSize: maxBodyBytes,
    onError: (context) => {
      // The rest of the body is not read: the connection must not be reused.
      context.header('Connection', 'close');
      return context.json(
        { error: 'payload_too_large', message: `the body exceeds ${maxBodyBytes} bytes: send smaller batches` },
        413,
      );
    },
  });
  app.onError((error, context) => {
    const status = (error as { status?: number }).status;
    if (status === 413) {
      context.header('Connection', 'close');
      return context.json({ error: 'payload_too_large', message: `the body exceeds ${maxBodyBytes} bytes` }, 413);
    }
    return context.json({ error: 'internal', message: 'the request could not be stored; try again later' }, 500);
  });
  return { app, limitBody, maxBodyBytes };
}

/** Builds the Hono app of the endpoint (no socket: serve it with {@link startSignalServer} or call `app.request`). */
export function createSignalApp(options: SignalAppOptions): Hono {
  const { app, limitBody } = createGuardedApp(options, ['/signals']);

  app.post('/signals', limitBody, async (context) => {
    const bytes = new Uint8Array(await context.req.arrayBuffer());
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return context.json({ error: 'malformed', message: 'the body is not valid UTF-8', issues: [] }, 400);
    }
    const parsed = parseSignalBody(text, isJsonLines(context.req.header('content-type')));
    if (parsed.issues.length > 0 || parsed.records === 0) {
      const issues = parsed.issues.length > 0 ? parsed.issues : [{ message: 'no signals in the body' }];
      return context.json(
        {
          error: 'malformed',
          message: `${parsed.malformed} of ${parsed.records} signals refused, nothing stored: ${formatSignalIssue(issues[0]!)}`,
          refused: parsed.malformed,
          issues: issues.slice(0, MAX_ISSUES_IN_ANSWER),
        },
        400,
      );
    }
    const result = await storeSignals(
      options.db,
      parsed.signals.map((located) => located.signal),
      {
        source: 'endpoint',
        ...(options.storeGoals !== undefined ? { storeGoals: options.storeGoals } : {}),
        ...(options.now !== undefined ? { now: options.now } : {}),
      },
    );
    return context.json({ received: parsed.records, stored: result.stored, duplicates: result.duplicates }, 200);
  });

  app.all('/signals', (context) => context.json({ error: 'method_not_allowed', message: 'use POST /signals' }, 405));
  app.notFound((context) => context.json({ error: 'not_found', message: 'routes: POST /signals, GET /health' }, 404));
  return app;
}

/** Options of {@link startSignalServer}. */
export interface SignalServerOptions extends SignalAppOptions {
  /** Port; 0 picks a free one. Default 8787. */
  port?: number;
  /** Interface to listen on. Default 127.0.0.1 (loopback only). */
  hostname?: string;
}

/** A running endpoint. */
export interface SignalServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  hostname: string;
  close(): Promise<void>;
}

/** Default port of `kloop serve`. */
export const DEFAULT_SERVE_PORT = 8787;

/**
 * Starts the endpoint and resolves once it listens.
 *
 * @throws InputError when the token is too short; the listen error (e.g. EADDRINUSE) otherwise
 */
export function startSignalServer(options: SignalServerOptions): Promise<SignalServer> {
  return listenApp(createSignalApp(options), options);
}

/**
 * Serves a Hono app on a socket and resolves once it listens.
 *
 * @throws the listen error (e.g. EADDRINUSE)
 */
export function listenApp(app: Hono, options: { port?: number; hostname?: string }): Promise<SignalServer> {
  const hostname = options.hostname ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, port: options.port ?? DEFAULT_SERVE_PORT, hostname },
      (info: AddressInfo) => {
        server.off('error', reject);
        const host = info.family === 'IPv6' || hostname.includes(':') ? `[${info.address}]` : info.address;
        resolve({
          url: `http://${host}:${info.port}`,
          port: info.port,
          hostname,
          close: () =>
            new Promise<void>((done, fail) => {
              server.close((error) => (error === undefined ? done() : fail(error)));
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
    server.once('error', reject);
  });
}
