/**
 * Issue #36, fault 16: `kloop doctor` and `kloop config` printed the
 * PostgreSQL password of the storage URL in clear (docs/storage.md promises
 * `***`), and `kloop view` accepted a change sent with `Origin: null` (a
 * sandboxed frame's, a file:// page's) and a valid token.
 *
 * Through the CLI as a user runs it: a study whose kloop.yaml names
 * `storage: postgres://postgres:<password>@127.0.0.1:5432/test?schema=…`
 * (the test server trusts the user, so the password is never checked, only
 * carried), every command that prints the storage or a message about it, in
 * text and `--json`, and a failure naming it; then the viewer, started with
 * a token, answering a change from `Origin: null`.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestSchema, postgresAvailable, type TestSchema } from '../../src/test-support/postgres.ts';
import { kloop } from '../cli-in-process.ts';
import { makeStudy, spawnKloop, waitForLine } from '../reliability-fixture.ts';

const PASSWORD = 'Pl4nted-Secret_f16';
const postgres = await postgresAvailable();
const cleanups: Array<() => void> = [];
const schemas: TestSchema[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGTERM');
  for (const schema of schemas.splice(0)) await schema.drop();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** The storage URL of a fresh schema, with the password planted in it. */
async function storageWithPassword(): Promise<string> {
  const schema = await createTestSchema();
  schemas.push(schema);
  const url = new URL(schema.url);
  url.password = PASSWORD;
  return url.toString();
}

describe.runIf(postgres)('a PostgreSQL password in the storage URL (issue #36, fault 16)', () => {
  it('never appears in any output: run, status, doctor, config, history, eval, report, and a failure, in text and --json; the URL is shown with ***', async () => {
    const study = makeStudy(cleanups, { maxExperiments: 2 });
    const storage = await storageWithPassword();
    const masked = storage.replace(`:${PASSWORD}@`, ':***@');
    const config = path.join(study, 'kloop.yaml');
    writeFileSync(config, `storage: ${storage}\n${readFileSync(config, 'utf8')}`);
    const outputs: Record<string, string> = {};
    const record = async (name: string, ...args: string[]): Promise<number> => {
      const result = await kloop(...args);
      outputs[name] = `${result.stdout}\n${result.stderr}`;
      return result.code;
    };
    expect(await record('run', 'run', study)).toBe(0);
    expect(await record('run --json', 'run', study, '--json')).toBe(0);
    for (const command of ['status', 'doctor', 'config', 'history']) {
      await record(command, command, study);
      await record(`${command} --json`, command, study, '--json');
    }
    await record('eval --json', 'eval', study, '--partition', 'anchor', '--json');
    await record('report --format json', 'report', study, '--format', 'json', '--out', '-');
    const elsewhere = new URL(storage);
    elsewhere.searchParams.set('schema', `${elsewhere.searchParams.get('schema')}_absent`);
    elsewhere.searchParams.set('password', PASSWORD); // libpq's other spelling of a password
    expect(await record('a failure (--db, --json)', '--db', elsewhere.toString(), 'history', study, '--json')).toBe(2);

    const leaking = Object.entries(outputs)
      .filter(([, text]) => text.includes(PASSWORD))
      .map(([name]) => name);
    expect(leaking).toEqual([]);
    for (const name of ['run', 'doctor', 'doctor --json', 'config', 'config --json', 'status --json'])
      expect(outputs[name], name).toContain(masked);
    expect(outputs['a failure (--db, --json)']).toContain('password=***');
    expect(outputs['a failure (--db, --json)']).toContain('this study has no database yet');
  });
});

describe('the viewer refuses a change from Origin: null (issue #36, fault 16)', () => {
  it('with a valid token, a POST with Origin: null gets 403 forbidden_origin; from its own origin the same POST reaches the handler', async () => {
    const study = makeStudy(cleanups);
    const token = 'view-token-0123456789abcdef';
    const child = spawnKloop(['view', study, '--port', '0', '--json'], {
      env: { ...process.env, NO_COLOR: '1', KLOOP_VIEW_TOKEN: token },
    });
    children.push(child);
    let stdout = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    await waitForLine(child, /viewer for .* at http/);
    while (!stdout.includes('\n')) await new Promise((resolve) => setTimeout(resolve, 20));
    const { url } = JSON.parse(stdout.split('\n')[0]!) as { url: string };
    const activate = (origin: string | undefined) =>
      fetch(new URL('api/versions/999/activate', url), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          ...(origin !== undefined ? { Origin: origin } : {}),
        },
        body: JSON.stringify({ by: 'Ana' }),
      });
    const opaque = await activate('null');
    expect(opaque.status).toBe(403);
    expect(await opaque.json()).toEqual({
      error: 'forbidden_origin',
      message: "changes are accepted only from the viewer's own pages",
    });
    expect((await activate('http://attacker.example')).status).toBe(403);
    // Past the origin check, to the handler: there is no version 999.
    for (const origin of [new URL(url).origin, undefined]) {
      const own = await activate(origin);
      expect(own.status).toBe(404);
      expect(((await own.json()) as { error: string }).error).toBe('not_found');
    }
  });
});
