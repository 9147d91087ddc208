/**
 * Error identity by marker (src/errors.ts): `isInstance` matches the errors
 * of another copy of kloop, which `instanceof` does not, and never an error
 * that only borrows a kloop error's name.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BudgetExceededError } from './providers/budget.ts';
import { StudyBusyError } from './storage/lease.ts';
import { InfrastructureError, InputError, isAbortError, isKloopError, KloopError, StorageError } from './errors.ts';

const folder = mkdtempSync(path.join(tmpdir(), 'kloop-errors-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A second copy of src/errors.ts, as a second kloop in node_modules would load it. */
async function secondCopy(): Promise<typeof import('./errors.ts')> {
  const file = path.join(folder, 'errors.ts');
  copyFileSync(path.join(import.meta.dirname, 'errors.ts'), file);
  mkdirSync(path.join(folder, 'text'), { recursive: true });
  copyFileSync(path.join(import.meta.dirname, 'text', 'mask-secrets.ts'), path.join(folder, 'text', 'mask-secrets.ts'));
  return (await import(pathToFileURL(file).href)) as typeof import('./errors.ts');
}

describe('error identity', () => {
  it('matches an error of another copy of kloop, where instanceof does not', async () => {
    const other = await secondCopy();
    expect(other.InputError).not.toBe(InputError);
    const input = new other.InputError('bad key', { field: 'gate.alpah' });
    expect(input).not.toBeInstanceOf(InputError);
    expect(InputError.isInstance(input)).toBe(true);
    expect(KloopError.isInstance(input)).toBe(true);
    expect(isKloopError(input)).toBe(true);
    expect(InfrastructureError.isInstance(input)).toBe(false);
    expect(StorageError.isInstance(input)).toBe(false);
    const infrastructure = new other.InfrastructureError('HTTP 503', { isRetryable: true, statusCode: 503 });
    expect(InfrastructureError.isInstance(infrastructure)).toBe(true);
    expect(InputError.isInstance(infrastructure)).toBe(false);
    expect(StorageError.isInstance(new other.StorageError('locked'))).toBe(true);
  });

  it('matches subclasses through every marker up the tree, and each subclass only by its own', () => {
    const budget = new BudgetExceededError('spent');
    expect([
      KloopError.isInstance(budget),
      InfrastructureError.isInstance(budget),
      BudgetExceededError.isInstance(budget),
    ]).toEqual([true, true, true]);
    expect(BudgetExceededError.isInstance(new InfrastructureError('HTTP 500'))).toBe(false);
    const busy = new StudyBusyError(undefined);
    expect([KloopError.isInstance(busy), StudyBusyError.isInstance(busy), InputError.isInstance(busy)]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('never matches by name: an error named like a kloop error is not one', () => {
    const impostor = Object.assign(new Error('named only'), { name: 'InfrastructureError' });
    expect(InfrastructureError.isInstance(impostor)).toBe(false);
    expect(KloopError.isInstance(impostor)).toBe(false);
    for (const value of [null, undefined, 'InputError', 42, { code: 'input' }])
      expect(InputError.isInstance(value)).toBe(false);
  });

  it("reads the platform's aborts and timeouts by their DOMException kind", () => {
    expect(isAbortError(new DOMException('stop', 'AbortError'))).toBe(true);
    expect(isAbortError(new DOMException('slow', 'TimeoutError'))).toBe(true);
    expect(isAbortError(new DOMException('slow', 'TimeoutError'), ['AbortError'])).toBe(false);
    expect(isAbortError(new Error('other'))).toBe(false);
  });
});

/** Every source module of src/ (tests and fixtures left out), relative to src/. */
function sourceModules(dir = ''): string[] {
  return readdirSync(path.join(import.meta.dirname, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : sourceModules(relative);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [relative] : [];
  });
}

describe('error checks in src/', () => {
  it('identify no error by a name string, nor kloop errors by instanceof', () => {
    const byName = /\.name\s*[!=]==?\s*['"`]\w*(Error|Exception)['"`]/;
    const byClass =
      /instanceof\s+(KloopError|InputError|StorageError|InfrastructureError|StudyBusyError|BudgetExceededError|PatternLibraryError)\b/;
    const found = sourceModules().flatMap((module) =>
      readFileSync(path.join(import.meta.dirname, module), 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          byName.test(line) || byClass.test(line) ? [`src/${module}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(found).toEqual([]);
  });
});
