/**
 * Issue 32's size rule, held: no source file under src/ over 400 lines and
 * no function over 80 lines (tests left out), as scripts/sizes.mjs counts
 * them (a nested function counts on its own).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

describe('source sizes', () => {
  it('no file over 400 lines and no function over 80 lines under src/', () => {
    const root = path.resolve(import.meta.dirname, '..');
    const report = execFileSync(process.execPath, ['scripts/sizes.mjs', 'src'], { cwd: root, encoding: 'utf8' });
    expect(report.trim()).toBe('files over 400 lines: 0\nfunctions over 80 lines: 0');
  });
});
