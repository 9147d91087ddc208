/**
 * The metric scraper of an online study (`metrics.scraper.command` in
 * kloop.yaml): the user's own program (a DB query, an API call) that prints
 * outcome lines, NDJSON `{"unit","metric","value","at"}`, for the outcomes
 * since a cursor. kloop runs it in the study folder as
 * `<command...> --since <cursor>` (the cursor is an ISO time: the latest
 * outcome time it stored from the scraper; `1970-01-01T00:00:00.000Z` the
 * first time), checks every line as `POST /outcomes` does and stores the
 * good ones once.
 *
 * A scraper that exits with an error, is killed, prints non-UTF-8 or runs
 * past `metrics.scraper.timeoutMs` (it is killed) stores nothing and leaves
 * the cursor where it was: the failure is recorded (`online:scraper:last` in
 * the study state, shown in the report) and the next run asks again from the
 * same cursor. A clock before the last scrape (the clock went backwards) is
 * refused the same way.
 */
import { spawn } from 'node:child_process';
import type { OnlineStudy } from '../study/online-study.ts';
import { readOnlineState, writeOnlineState } from '../../storage/online-store.ts';

/** Study-state key of the scraper's cursor. */
export const SCRAPER_CURSOR_KEY = 'online:scraper:cursor';
/** Study-state key of the last scrape's record. */
export const SCRAPER_LAST_KEY = 'online:scraper:last';
const EPOCH = new Date(0).toISOString();
/** Most bytes of a scraper's output read (beyond: a failure). */
export const MAX_SCRAPER_OUTPUT_BYTES = 64 * 1024 * 1024;

/** What one scrape did. */
export type ScrapeResult =
  | {
      outcome: 'ok';
      at: string;
      since: string;
      cursor: string;
      stored: number;
      duplicates: number;
      refused: number;
      issues: { line: number; reason: string }[];
    }
  | { outcome: 'failed'; at: string; since: string; error: string };

function runProgram(
  command: readonly string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ ok: true; stdout: Buffer } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: string | undefined;
    const timer = setTimeout(() => {
      failure = `timed out after ${timeoutMs} ms (metrics.scraper.timeoutMs): killed`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_SCRAPER_OUTPUT_BYTES && failure === undefined) {
        failure = `printed more than ${MAX_SCRAPER_OUTPUT_BYTES} bytes: killed`;
        child.kill('SIGKILL');
      } else chunks.push(chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ ok: false, error: `could not start ${command[0]}: ${error.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const tail = stderr.trim() === '' ? '' : `; stderr: ${stderr.trim().split('\n').slice(-3).join(' | ')}`;
      if (failure !== undefined) resolve({ ok: false, error: failure });
      else if (code !== 0)
        resolve({ ok: false, error: `exited with ${code === null ? `signal ${signal}` : `code ${code}`}${tail}` });
      else resolve({ ok: true, stdout: Buffer.concat(chunks) });
    });
  });
}

/**
 * Runs the study's scraper once (see the module's description).
 *
 * @returns what it stored, or the failure it recorded; undefined when the study has no scraper
 */
export async function runScraper(study: OnlineStudy): Promise<ScrapeResult | undefined> {
  const scraper = study.config.metrics.scraper;
  if (scraper === undefined) return undefined;
  const at = study.now().toISOString();
  const since = (await readOnlineState(study.db, SCRAPER_CURSOR_KEY)) ?? EPOCH;
  const last = await readOnlineState(study.db, SCRAPER_LAST_KEY);
  const lastAt = last === undefined ? undefined : (JSON.parse(last) as { at: string }).at;
  const fail = async (error: string): Promise<ScrapeResult> => {
    const result: ScrapeResult = {
      outcome: 'failed',
      at,
      since,
      error: `the metric scraper ${error}; nothing was stored, the cursor stays at ${since}`,
    };
    // The record keeps the latest time a scrape was asked at, so a clock that went backwards stays refused until it catches up.
    await writeOnlineState(
      study.db,
      SCRAPER_LAST_KEY,
      JSON.stringify(lastAt !== undefined && lastAt > at ? { ...result, at: lastAt } : result),
    );
    return result;
  };
  if (lastAt !== undefined && at < lastAt)
    return fail(
      `was not run: the clock (${at}) is before the last scrape (${lastAt}): a clock that goes backwards is refused`,
    );
  const ran = await runProgram([...scraper.command, '--since', since], study.config.dir, scraper.timeoutMs);
  if (!ran.ok) return fail(ran.error);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(ran.stdout);
  } catch {
    return fail('printed output that is not UTF-8');
  }
  const report = await study.recordOutcomeLines(text, 'scraper');
  const latest = text
    .split(/\r?\n/)
    .map((line, index) => ({ line: index + 1, raw: line }))
    .filter((entry) => entry.raw.trim() !== '' && !report.refused.some((refusal) => refusal.line === entry.line))
    .map((entry) => new Date((JSON.parse(entry.raw) as { at: string | number }).at).toISOString())
    // biome-ignore lint/complexity/useMathMinMax: the times are ISO 8601 strings, compared as text, not numbers
    .reduce((maximum, time) => (time > maximum ? time : maximum), since);
  await writeOnlineState(study.db, SCRAPER_CURSOR_KEY, latest);
  const result: ScrapeResult = {
    outcome: 'ok',
    at,
    since,
    cursor: latest,
    stored: report.stored,
    duplicates: report.duplicates,
    refused: report.refused.length,
    issues: report.refused.slice(0, 20).map(({ line, reason }) => ({ line, reason })),
  };
  await writeOnlineState(study.db, SCRAPER_LAST_KEY, JSON.stringify(result));
  return result;
}
