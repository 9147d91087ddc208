/**
 * `scripts/build.mjs --if-stale` (the `prepare` script and the global set-up)
 * builds only when dist/ is not the build of the sources as they are; the
 * stamp's hash (scripts/build-state.mjs) is what tells.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { outputsHash, readBuildStamp, sourcesChangedSince, sourcesHash } from '../scripts/build-state.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A package folder holding `files` (paths relative to it). */
function packageWith(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'kloop-build-state-'));
  folders.push(root);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  return root;
}

describe('sourcesHash', () => {
  it('follows the contents of what the build reads, and only that', () => {
    const root = packageWith({
      'src/a.ts': 'export const a = 1;\n',
      'src/a.test.ts': 'test\n',
      'src/test-support/helper.ts': 'helper\n',
      'package.json': '{}\n',
    });
    const first = sourcesHash(root);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    const changes: Array<[string, string, boolean]> = [
      ['src/a.test.ts', 'another test\n', false], // the build leaves tests out
      ['src/test-support/helper.ts', 'another helper\n', false],
      ['src/a.ts', 'export const a = 2;\n', true],
      ['src/pages/page.html', '<p>\n', true], // an asset the build copies
      ['package-lock.json', '{"lockfileVersion": 3}\n', true], // the versions of the bundled packages
      ['tsconfig.build.json', '{}\n', true],
    ];
    let previous = first;
    for (const [name, text, counts] of changes) {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), text);
      const now = sourcesHash(root);
      expect(now !== previous, name).toBe(counts);
      previous = now;
    }
    // Editors' files and broken links are not sources (tsc skips them): no error, no rebuild.
    symlinkSync('user@host.1234:1700000000', path.join(root, 'src/.#a.ts'));
    symlinkSync(path.join(root, 'nowhere'), path.join(root, 'src/gone.ts'));
    writeFileSync(path.join(root, 'src/.a.ts.swp'), 'swap\n');
    writeFileSync(path.join(root, 'src/a.ts~'), 'backup\n');
    expect(sourcesHash(root)).toBe(previous);
    // Contents, not times: undoing an edit gives the hash back.
    writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 3;\n');
    const edited = sourcesHash(root);
    writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 2;\n');
    expect(sourcesHash(root)).not.toBe(edited);
    expect(sourcesHash(root)).toBe(previous);
  });
});

describe('sourcesChangedSince', () => {
  it('tells a source written after a moment, even one restored to what it was, from one left alone', async () => {
    const root = packageWith({ 'src/a.ts': 'export const a = 1;\n', 'package.json': '{}\n' });
    const before = sourcesHash(root);
    // Past the file system clock's tick (a few ms), then the start as the build takes it: the status-change
    // time of a folder it makes.
    await new Promise((resolve) => setTimeout(resolve, 50));
    mkdirSync(path.join(root, '.dist-building-1'));
    const started = statSync(path.join(root, '.dist-building-1')).ctimeMs;
    expect(sourcesChangedSince(root, started)).toBe(false);
    writeFileSync(path.join(root, 'src/a.test.ts'), 'not a source\n');
    expect(sourcesChangedSince(root, started)).toBe(false);
    writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 2;\n');
    writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 1;\n');
    expect(sourcesHash(root)).toBe(before); // the same contents: only the time tells
    expect(sourcesChangedSince(root, started)).toBe(true);
  });
});

describe('outputsHash', () => {
  it('follows every file of dist/ but the stamp: one deleted, edited or added makes the build stale', () => {
    const root = packageWith({
      'dist/index.js': 'export {};\n',
      'dist/bin/kloop.js': 'run();\n',
      'dist/.build-stamp': '{}\n',
    });
    const built = outputsHash(root);
    writeFileSync(path.join(root, 'dist/.build-stamp'), '{"sources": "x"}\n');
    expect(outputsHash(root)).toBe(built);
    writeFileSync(path.join(root, 'dist/bin/kloop.js'), 'run(1);\n');
    expect(outputsHash(root)).not.toBe(built);
    writeFileSync(path.join(root, 'dist/bin/kloop.js'), 'run();\n');
    expect(outputsHash(root)).toBe(built);
    writeFileSync(path.join(root, 'dist/bin/extra.js'), '\n');
    expect(outputsHash(root)).not.toBe(built);
    symlinkSync(path.join(root, 'nowhere'), path.join(root, 'dist/bin/dangling.js'));
    expect(() => outputsHash(root)).not.toThrow();
    rmSync(path.join(root, 'dist/bin'), { recursive: true });
    expect(outputsHash(root)).not.toBe(built);
    rmSync(path.join(root, 'dist'), { recursive: true });
    expect(outputsHash(root)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('readBuildStamp', () => {
  it("reads a finished build's stamp; none, or one without both hashes, is undefined", () => {
    expect(readBuildStamp(packageWith({}))).toBeUndefined();
    expect(readBuildStamp(packageWith({ 'dist/.build-stamp': '2026-12-01T10:00:00.000Z\n' }))).toBeUndefined();
    expect(
      readBuildStamp(
        packageWith({ 'dist/.build-stamp': '{"sources": "abc", "builtAt": "2026-12-01T10:00:00.000Z"}\n' }),
      ),
    ).toBeUndefined();
    const stamp = { sources: 'f'.repeat(64), outputs: 'e'.repeat(64), builtAt: '2026-12-07T00:00:00.000Z' };
    expect(readBuildStamp(packageWith({ 'dist/.build-stamp': `${JSON.stringify(stamp)}\n` }))).toEqual(stamp);
  });
});

describe('build --if-stale', () => {
  it('leaves dist/ alone when it is the build of the sources as they are', () => {
    // The global set-up made sure of it; `npx kloop` in a clone runs this through `prepare`.
    expect(readBuildStamp(ROOT)?.sources).toBe(sourcesHash(ROOT));
    expect(readBuildStamp(ROOT)?.outputs).toBe(outputsHash(ROOT));
    const stamp = readFileSync(path.join(ROOT, 'dist', '.build-stamp'), 'utf8');
    const bundleTime = statSync(path.join(ROOT, 'dist', 'bin', 'kloop.js')).mtimeMs;
    const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(build.status).toBe(0);
    // On stderr: `npm pack --json` runs `prepare`, and its standard output must stay JSON.
    expect(build.stdout).toBe('');
    expect(build.stderr).toMatch(/^build: dist\/ is up to date with the sources \(built [^)]+\); nothing to do\n$/);
    expect(readFileSync(path.join(ROOT, 'dist', '.build-stamp'), 'utf8')).toBe(stamp);
    expect(statSync(path.join(ROOT, 'dist', 'bin', 'kloop.js')).mtimeMs).toBe(bundleTime);
  });
});
