/**
 * The HTTP routes of an online study on `kloop serve`, behind the same guard
 * as `/signals` (bearer token, body-size limit, token bucket per client:
 * src/signals/server.ts):
 *
 * - `POST /assign` with `{"unit": "r-1"}` → 200 `{ unit, version, text, arm,
 *   experimentId, window, exposedAt }`; or `{"units": [...]}` (a batch of
 *   sends, at most 1000) → 200 `{ assignments: [...] }`. 400 for a bad body,
 *   409 when the study has not started or has stopped (`error` is
 *   `online.not_started` / `online.stopped`: serve the active version).
 * - `POST /outcomes` with NDJSON lines `{"unit","metric","value","at"}` →
 *   200 `{ received, stored, duplicates, refused, issues: [{ line, reason }] }`:
 *   the good lines are stored (once: a re-sent line is a duplicate), the bad
 *   ones refused with their line numbers, counted and recorded; 400 when the
 *   body is not UTF-8 or holds no line.
 */
import type { Hono } from 'hono';
import { isKloopError } from '../../errors.ts';
import { createGuardedApp } from '../../signals/server.ts';
import type { SignalAppOptions } from '../../signals/server.ts';
import type { OnlineStudy } from '../study/online-study.ts';

/** Most units in one `POST /assign`. */
export const MAX_UNITS_PER_ASSIGN = 1000;
/** Most issues returned in one answer. */
const MAX_ISSUES = 100;

/** A request's body as text; undefined when it is not valid UTF-8. */
async function readText(request: Request): Promise<string | undefined> {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(await request.arrayBuffer()));
  } catch {
    return undefined;
  }
}

/** Builds the online study's app: `/assign`, `/outcomes`, `/health`. */
export function createOnlineApp(
  study: OnlineStudy,
  options: Omit<SignalAppOptions, 'db' | 'storeGoals' | 'now'>,
): Hono {
  const { app, limitBody } = createGuardedApp(options, ['/assign', '/outcomes']);

  app.post('/assign', limitBody, async (context) => {
    const text = await readText(context.req.raw);
    let body: unknown;
    try {
      body = text === undefined ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const single = body !== null && typeof body === 'object' && typeof (body as { unit?: unknown }).unit === 'string';
    const units = single ? [(body as { unit: string }).unit] : (body as { units?: unknown } | undefined)?.units;
    if (
      !Array.isArray(units) ||
      units.length === 0 ||
      units.length > MAX_UNITS_PER_ASSIGN ||
      units.some((unit) => typeof unit !== 'string')
    ) {
      return context.json(
        {
          error: 'malformed',
          message: `send {"unit": "<id>"} or {"units": ["<id>", ...]} (1 to ${MAX_UNITS_PER_ASSIGN} ids)`,
        },
        400,
      );
    }
    try {
      const assignments = (await study.assignMany(units as string[])).map((assignment, index) => ({
        unit: units[index] as string,
        ...assignment,
      }));
      return single ? context.json(assignments[0]!, 200) : context.json({ assignments }, 200);
    } catch (error) {
      if (isKloopError(error) && error.code.startsWith('online.'))
        return context.json({ error: error.code, message: error.detail }, error.code === 'online.bad_unit' ? 400 : 409);
      throw error;
    }
  });

  app.post('/outcomes', limitBody, async (context) => {
    const text = await readText(context.req.raw);
    if (text === undefined) return context.json({ error: 'malformed', message: 'the body is not valid UTF-8' }, 400);
    const received = text.split(/\r?\n/).filter((line) => line.trim() !== '').length;
    if (received === 0)
      return context.json(
        {
          error: 'malformed',
          message: 'no outcome lines in the body: send NDJSON, one {"unit","metric","value","at"} per line',
        },
        400,
      );
    const report = await study.recordOutcomeLines(text, 'http');
    return context.json(
      {
        received,
        stored: report.stored,
        duplicates: report.duplicates,
        refused: report.refused.length,
        issues: report.refused.slice(0, MAX_ISSUES).map(({ line, reason }) => ({ line, reason })),
      },
      200,
    );
  });

  for (const route of ['/assign', '/outcomes'])
    app.all(route, (context) => context.json({ error: 'method_not_allowed', message: `use POST ${route}` }, 405));
  app.notFound((context) =>
    context.json({ error: 'not_found', message: 'routes: POST /assign, POST /outcomes, GET /health' }, 404),
  );
  return app;
}
