/**
 * The signal endpoint over a real socket on 127.0.0.1, with fetch: 401
 * without or with a wrong token, 413 for an oversized body, 400 for a
 * malformed signal (naming index and field, storing nothing), 200 for a valid
 * batch (idempotent by id), JSON Lines bodies, 429 beyond the rate limit, and
 * no start without a token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countSignals } from '../src/signals/signal-store.ts';
import type { SignalServer } from '../src/signals/server.ts';
import { resolveServeToken, startSignalServer } from '../src/signals/server.ts';
import type { StudyDatabase } from '../src/storage/study-database.ts';
import { openDatabase } from '../src/storage/database.ts';

const TOKEN = 'test-token-0123456789abcdef';
let db: StudyDatabase;
let server: SignalServer;

function signal(id: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    time: '2025-03-09T10:00:00Z',
    assemblyMethod: 'partial',
    confidence: 0.4,
    appClass: 'booking',
    hasCommitments: true,
    entityCount: 4,
    artifactVersion: 'v1',
    goal: 'a kennel for pets',
    uncoveredEntities: ['Pet'],
    ...overrides,
  };
}

function post(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
    body,
  });
}

beforeAll(async () => {
  db = await openDatabase(':memory:');
  server = await startSignalServer({
    db,
    token: TOKEN,
    port: 0,
    maxBodyBytes: 1_048_576,
    ratePerSecond: 1_000,
    burst: 1_000,
  });
});
afterAll(async () => {
  await server.close();
  await db.destroy();
});

describe('POST /signals on 127.0.0.1', () => {
  it('listens on the loopback interface by default', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('401 without a token and with a wrong one', async () => {
    const missing = await fetch(`${server.url}/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signal('a')),
    });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toContain('Bearer');
    const wrong = await post(JSON.stringify(signal('a')), { authorization: 'Bearer not-the-token-at-all-000' });
    expect(wrong.status).toBe(401);
    const basic = await post(JSON.stringify(signal('a')), { authorization: `Basic ${TOKEN}` });
    expect(basic.status).toBe(401);
    expect(await countSignals(db)).toBe(0);
  });

  it('413 for a body above the limit', async () => {
    const big = JSON.stringify(
      Array.from({ length: 6_000 }, (_, index) => signal(`big-${index}`, { goal: 'x'.repeat(200) })),
    );
    expect(Buffer.byteLength(big)).toBeGreaterThan(1_048_576);
    const response = await post(big);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: string }).error).toBe('payload_too_large');
    expect(await countSignals(db)).toBe(0);
  });

  it('413 also for a streamed body without Content-Length', async () => {
    const chunk = new TextEncoder().encode(`${JSON.stringify(signal('stream', { goal: 'y'.repeat(10_000) }))}\n`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 1_200_000) controller.close();
        else {
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        }
      },
    });
    const response = await fetch(`${server.url}/signals`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${TOKEN}` },
      body,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    expect(response.status).toBe(413);
    expect(await countSignals(db)).toBe(0);
  });

  it('400 for a malformed signal, naming the index and the field, and nothing of the batch is stored', async () => {
    const response = await post(
      JSON.stringify([signal('ok-1'), signal('bad-1', { confidence: 7 }), signal('bad-2', { colour: 'red' })]),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      error: string;
      message: string;
      issues: Array<{ index: number; field: string; message: string }>;
    };
    expect(body.error).toBe('malformed');
    expect(body.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ index: 1, field: 'confidence' }),
        expect.objectContaining({ index: 2, field: 'colour' }),
      ]),
    );
    expect(body.message).toContain('index 1: confidence');
    expect(await countSignals(db)).toBe(0);
    const notJson = await post('{"id": ');
    expect(notJson.status).toBe(400);
  });

  it('200 for a valid batch; sending it again stores nothing new', async () => {
    const batch = JSON.stringify([
      signal('v-1'),
      signal('v-2'),
      signal('v-3', { assemblyMethod: 'direct', confidence: 0.9 }),
    ]);
    const first = await post(batch);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ received: 3, stored: 3, duplicates: 0 });
    const again = await post(batch);
    expect(await again.json()).toEqual({ received: 3, stored: 0, duplicates: 3 });
    const single = await post(JSON.stringify(signal('v-4')));
    expect(await single.json()).toEqual({ received: 1, stored: 1, duplicates: 0 });
    expect(await countSignals(db)).toBe(4);
  });

  it('accepts JSON Lines, and reports its malformed lines by line', async () => {
    const lines = [JSON.stringify(signal('l-1')), JSON.stringify(signal('l-2'))].join('\n');
    const response = await post(lines, { 'content-type': 'application/x-ndjson' });
    expect(await response.json()).toEqual({ received: 2, stored: 2, duplicates: 0 });
    const bad = await post(`${JSON.stringify(signal('l-3'))}\n{"id": "l-4"}\n`, {
      'content-type': 'application/x-ndjson',
    });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { issues: Array<{ line: number; field?: string }> };
    expect(body.issues[0]).toMatchObject({ line: 2 });
  });

  it('answers 404 elsewhere and 405 for another method', async () => {
    expect((await fetch(`${server.url}/nothing`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    expect((await fetch(`${server.url}/signals`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});

describe('rate limit and startup', () => {
  it('429 with Retry-After beyond the burst', async () => {
    const limitedDb = await openDatabase(':memory:');
    const limited = await startSignalServer({ db: limitedDb, token: TOKEN, port: 0, ratePerSecond: 0.01, burst: 2 });
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 4; index += 1) {
        const response = await fetch(`${limited.url}/signals`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify(signal(`r-${index}`)),
        });
        statuses.push(response.status);
        if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect(statuses).toEqual([200, 200, 429, 429]);
    } finally {
      await limited.close();
      await limitedDb.destroy();
    }
  });

  it('refuses to start without a token (or with a short one)', () => {
    expect(() => resolveServeToken({}, 'KLOOP_SERVE_TOKEN')).toThrow(/refusing to start without a bearer token/);
    expect(() => resolveServeToken({ MY_TOKEN: 'short' }, 'MY_TOKEN')).toThrow(/too short/);
    expect(resolveServeToken({ MY_TOKEN: TOKEN }, 'MY_TOKEN')).toBe(TOKEN);
  });
});
