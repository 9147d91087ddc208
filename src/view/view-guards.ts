/**
 * The viewer's request guards (`kloop view`, src/view/view-server.ts): only
 * the allowed Host names (no DNS rebinding), strict security headers, no
 * caching of the API; and for a change (any method but GET and HEAD): refused
 * when the notebook is read-only or the viewer has no token, else a bearer
 * token, the viewer's own origin and a body of at most 64 KiB.
 */
import type { Hono } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { csrf } from 'hono/csrf';
import { secureHeaders } from 'hono/secure-headers';

/** Largest body of a change, in bytes. */
const MAX_BODY_BYTES = 64 * 1024;

/** Answers only requests whose Host is one of `allowedHosts` (lower case), with the viewer's security headers. */
export function installRequestGuards(app: Hono, allowedHosts: ReadonlySet<string>): void {
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
}

/**
 * Writes: refused when read-only (`readOnlyNotebook` says why, or `token` is
 * null), else a bearer token and the same origin.
 */
export function installWriteGuards(app: Hono, token: string | null, readOnlyNotebook: string | undefined): void {
  const bearer = token === null ? null : bearerAuth({ token, realm: 'kloop' });
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
      maxSize: MAX_BODY_BYTES,
      onError: (context) => context.json({ error: 'payload_too_large', message: 'the body exceeds 64 KiB' }, 413),
    }),
  );
}
