/**
 * Whether dist/ is the build of the sources as they are (`node
 * scripts/build.mjs --if-stale`, the `prepare` script and the integration
 * tests' global set-up): the build writes {@link sourcesHash} and
 * {@link outputsHash} into `dist/.build-stamp` last, so a stamp exists only
 * for a finished build, and a build is current when its stamp holds the hash
 * of the sources now and dist/ is as the build left it (a file of dist/
 * deleted or edited since makes it stale too).
 *
 * A hash of the contents, not modification times: a checkout, a copy or an
 * edit undone gives the same answer as the files' contents do.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The files the build reads besides src/: the lockfile stands for the versions of the bundled packages. */
export const BUILD_INPUTS = Object.freeze([
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build.mjs',
  'scripts/build-state.mjs',
]);

/** Whether `file` is a regular file, through links; a broken link is not (tsc skips it too). */
export function isFile(file) {
  return statSync(file, { throwIfNoEntry: false })?.isFile() === true;
}

/**
 * Whether a name under src/ (`/` separated) is an editor's, not a source: a hidden file or folder (a swap
 * file `.name.swp`, a lock link `.#name`) or a backup (`name~`). The build neither reads nor copies these.
 */
export function isEditorFile(name) {
  return name.split('/').some((part) => part.startsWith('.')) || name.endsWith('~');
}

/** The files of src/ the build reads (see {@link sourcesHash}), `/` separated, sorted. */
function sourceFiles(root) {
  return readdirSync(path.join(root, 'src'), { recursive: true })
    .map((name) => ['src', ...String(name).split(path.sep)].join('/'))
    .filter(
      (name) =>
        !name.endsWith('.test.ts') &&
        !name.startsWith('src/test-support/') &&
        !isEditorFile(name) &&
        isFile(path.join(root, name)),
    )
    .sort();
}

/**
 * A SHA-256 (64 hex digits) of every file the build reads under `root`: the
 * files of src/ but its `*.test.ts` files and src/test-support/ (the build
 * leaves them out) and editors' files (hidden ones, backups ending in `~`),
 * then {@link BUILD_INPUTS}, each with its path (`/` separated). A missing
 * input is hashed as missing; a broken link under src/ is left out, as tsc
 * leaves it out.
 *
 * @param {string} root the package's folder
 * @returns {string}
 * @throws Error when `root` has no src/ folder
 */
export function sourcesHash(root) {
  const hash = createHash('sha256');
  for (const name of [...sourceFiles(root), ...BUILD_INPUTS]) {
    hash.update(`${name}\0`);
    try {
      hash.update(readFileSync(path.join(root, name)));
    } catch {
      hash.update('\0missing');
    }
    hash.update('\0');
  }
  return hash.digest('hex');
}

/**
 * Whether a file the build reads (those {@link sourcesHash} hashes) changed at or after `sinceMs` (its
 * status-change time, ctime, which every write moves and no tool sets back): a file edited during a build
 * and restored before its end has the hash it had, but not the time.
 *
 * @param {string} root the package's folder
 * @param {number} sinceMs a time in ms since the epoch
 * @returns {boolean}
 */
export function sourcesChangedSince(root, sinceMs) {
  return [...sourceFiles(root), ...BUILD_INPUTS].some(
    (name) => (statSync(path.join(root, name), { throwIfNoEntry: false })?.ctimeMs ?? 0) >= sinceMs,
  );
}

/**
 * A SHA-256 (64 hex digits) of every regular file under `folder` but those
 * named in `except`, each with its path (`/` separated, relative to
 * `folder`), in path order; of nothing when `folder` is missing.
 *
 * @param {string} folder
 * @param {readonly string[]} [except] paths relative to `folder`
 * @returns {string}
 */
export function folderHash(folder, except = []) {
  const hash = createHash('sha256');
  let names;
  try {
    names = readdirSync(folder, { recursive: true }).map((name) => String(name).split(path.sep).join('/'));
  } catch {
    names = [];
  }
  for (const name of names.filter((name) => !except.includes(name)).sort()) {
    const file = path.join(folder, name);
    if (!isFile(file)) continue;
    hash.update(`${name}\0`).update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/**
 * A SHA-256 (64 hex digits) of every file under `root`/dist/ but the stamp
 * ({@link folderHash}); of nothing when dist/ is missing.
 *
 * @param {string} root the package's folder
 * @returns {string}
 */
export function outputsHash(root) {
  return folderHash(path.join(root, 'dist'), ['.build-stamp']);
}

/**
 * The stamp of the finished build in `root`/dist/, or undefined when there is
 * none (no build finished, or one from before stamps held a hash).
 *
 * @param {string} root the package's folder
 * @returns {{ sources: string, outputs: string, builtAt: string } | undefined}
 */
export function readBuildStamp(root) {
  try {
    const stamp = JSON.parse(readFileSync(path.join(root, 'dist', '.build-stamp'), 'utf8'));
    return typeof stamp?.sources === 'string' && typeof stamp.outputs === 'string' && typeof stamp.builtAt === 'string'
      ? stamp
      : undefined;
  } catch {
    return undefined;
  }
}
