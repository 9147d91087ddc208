/**
 * Issue #36, fault 6: several processes at once on one custom study broke
 * each other. Every process transpiled `score.ts` to the same hidden file
 * beside it, imported it and deleted it, so concurrent commands failed with
 * exit 2 and messages that blamed the user's module (`cannot load the custom
 * module: Cannot find module '…/.score.ts.<hash>.kloop.mjs'`, or `the module
 * exports no score function` from a half-written file): 5 of 12 concurrent
 * `kloop config` failed on the code before the fix, on 2 cores.
 *
 * Through the compiled CLI, as a user (or `run` + `view` + `status`, or N
 * workers on one folder) would start them: 12 processes at once.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runKloop } from '../reliability-fixture.ts';

const PROCESSES = 12;
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('many processes at once on one custom study (issue #36, fault 6)', () => {
  it(`${PROCESSES} concurrent kloop config runs all load score.ts, print the same configuration, and leave no transpiled file behind`, async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'kloop-concurrent-custom-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const study = path.join(root, 'triage');
    const init = await runKloop(['init', study, '--task', 'custom', '--executor', 'command']);
    expect(init.code).toBe(0);
    const results = await Promise.all(Array.from({ length: PROCESSES }, () => runKloop(['config', study, '--json'])));
    expect(results.map((result) => [result.code, result.stderr])).toEqual(Array(PROCESSES).fill([0, '']));
    expect(new Set(results.map((result) => result.stdout)).size).toBe(1);
    const values = (JSON.parse(results[0]!.stdout) as { values: Array<{ key: string; value: unknown; note?: string }> })
      .values;
    expect(values.find((value) => value.key === 'task.module')?.value).toBe('score.ts');
    expect(values.some((value) => /the custom@[0-9a-f]{16} task's default/.test(value.note ?? ''))).toBe(true); // score.ts was loaded
    expect(readdirSync(study).filter((name) => name.includes('.kloop.'))).toEqual([]);
  });
});
