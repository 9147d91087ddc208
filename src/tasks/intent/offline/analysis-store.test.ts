import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readIntentCorpus } from '../../../test-support/intent-examples.ts';
import type { StoredAnalysis } from './analysis-store.ts';
import {
  STORE_FORMAT,
  STORE_KEPT_IDENTITIES,
  STORE_STALE_MS,
  cacheRoot,
  defaultAnalysisStore,
  openAnalysisStore,
} from './analysis-store.ts';
import type { AnalyzedWord } from './goal-analysis.ts';
import { analyzeGoal, clearGoalAnalysisCache, setGoalAnalysisStore } from './goal-analysis.ts';

const EXAMPLES_DIR = path.resolve(import.meta.dirname, '../../../../examples/intent/corpus');
const GOALS = readdirSync(EXAMPLES_DIR).flatMap((file) =>
  readIntentCorpus(path.join(EXAMPLES_DIR, file)).map((example) => example.input),
);
const temporary = mkdtempSync(path.join(tmpdir(), 'kloop-analysis-store-'));

afterEach(() => {
  setGoalAnalysisStore(undefined);
  clearGoalAnalysisCache();
});
afterAll(() => rmSync(temporary, { recursive: true, force: true }));

/** The analysis of every goal with no store: what a stored one must equal. */
function fresh(goals: readonly string[]) {
  setGoalAnalysisStore(null);
  clearGoalAnalysisCache();
  return goals.map(analyzeGoal);
}

describe('goal analyses kept on disk', () => {
  it('are written once per goal and read back equal to a fresh analysis', () => {
    const expected = fresh(GOALS);
    const store = openAnalysisStore<AnalyzedWord>(path.join(temporary, 'reference'), 'test');
    expect(store).not.toBeNull();
    setGoalAnalysisStore(store);
    clearGoalAnalysisCache();
    expect(GOALS.map(analyzeGoal)).toEqual(expected);
    expect(readdirSync(store!.folder).length).toBe(new Set(GOALS).size);
    // A new process: nothing in memory, everything from disk.
    clearGoalAnalysisCache();
    setGoalAnalysisStore(openAnalysisStore<AnalyzedWord>(path.join(temporary, 'reference'), 'test'));
    const read = GOALS.map(analyzeGoal);
    expect(read).toEqual(expected);
    expect(read[0]!.keySet).toEqual(expected[0]!.keySet);
  });

  it('are read from disk, and only for the text they were made from; a damaged file is analysed afresh', () => {
    const [first, second, third] = GOALS as [string, string, string];
    const store = openAnalysisStore<AnalyzedWord>(path.join(temporary, 'checks'), 'test')!;
    setGoalAnalysisStore(store);
    clearGoalAnalysisCache();
    for (const goal of [first, second, third]) analyzeGoal(goal);
    const fileOf = (goal: string) =>
      readdirSync(store.folder)
        .map((name) => path.join(store.folder, name))
        .find((file) => (JSON.parse(readFileSync(file, 'utf8')) as StoredAnalysis<AnalyzedWord>).goal === goal)!;
    // A changed lemma in the file is what the next process reads: the file is used.
    const firstFile = fileOf(first);
    const stored = JSON.parse(readFileSync(firstFile, 'utf8')) as StoredAnalysis<AnalyzedWord>;
    stored.words[0] = { ...stored.words[0]!, lemma: 'planted' };
    writeFileSync(firstFile, JSON.stringify(stored));
    // The second goal's file made for another text (as a hash collision would), the third's cut short.
    const secondFile = fileOf(second);
    writeFileSync(secondFile, JSON.stringify({ ...stored, goal: first }));
    const thirdFile = fileOf(third);
    writeFileSync(thirdFile, readFileSync(thirdFile, 'utf8').slice(0, 100));
    const expected = fresh([second, third]);
    setGoalAnalysisStore(openAnalysisStore<AnalyzedWord>(path.join(temporary, 'checks'), 'test'));
    clearGoalAnalysisCache();
    expect(analyzeGoal(first).words[0]!.lemma).toBe('planted');
    expect(analyzeGoal(second)).toEqual(expected[0]);
    expect(analyzeGoal(third)).toEqual(expected[1]);
    // An older format is not read either.
    writeFileSync(firstFile, JSON.stringify({ ...stored, format: STORE_FORMAT - 1 }));
    clearGoalAnalysisCache();
    expect(analyzeGoal(first).words[0]!.lemma).not.toBe('planted');
  });

  it('a file without the shape of an analysis, or that is not a regular file, is analysed afresh and replaced; files are private', () => {
    const goals = GOALS.slice(3, 9);
    const expected = fresh(goals);
    const store = openAnalysisStore<AnalyzedWord>(path.join(temporary, 'shapes'), 'test')!;
    setGoalAnalysisStore(store);
    clearGoalAnalysisCache();
    goals.forEach((goal) => analyzeGoal(goal));
    expect(statSync(store.folder).mode & 0o777).toBe(0o700);
    const files = readdirSync(store.folder).map((name) => path.join(store.folder, name));
    for (const file of files) expect(statSync(file).mode & 0o777).toBe(0o600);
    const byGoal = new Map(
      files.map((file) => [(JSON.parse(readFileSync(file, 'utf8')) as StoredAnalysis<AnalyzedWord>).goal, file]),
    );
    const stored = (goal: string) =>
      JSON.parse(readFileSync(byGoal.get(goal)!, 'utf8')) as StoredAnalysis<AnalyzedWord>;
    const [nullWord, noWords, wrongRuns, missingField, fifo, device] = goals as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    writeFileSync(byGoal.get(nullWord)!, JSON.stringify({ ...stored(nullWord), words: [null] }));
    writeFileSync(byGoal.get(noWords)!, JSON.stringify({ ...stored(noWords), words: [] }));
    writeFileSync(byGoal.get(wrongRuns)!, JSON.stringify({ ...stored(wrongRuns), nounRuns: [[0, 99_999]] }));
    const partial = stored(missingField);
    writeFileSync(
      byGoal.get(missingField)!,
      JSON.stringify({ ...partial, words: partial.words.map(({ lemma: _lemma, ...rest }) => rest) }),
    );
    rmSync(byGoal.get(fifo)!);
    execFileSync('mkfifo', [byGoal.get(fifo)!]);
    rmSync(byGoal.get(device)!);
    symlinkSync('/dev/zero', byGoal.get(device)!);
    clearGoalAnalysisCache();
    setGoalAnalysisStore(openAnalysisStore<AnalyzedWord>(path.join(temporary, 'shapes'), 'test'));
    expect(goals.map(analyzeGoal)).toEqual(expected);
    // The damaged files were replaced by good ones (the pipe and the link too: a write renames over them).
    clearGoalAnalysisCache();
    for (const [index, goal] of goals.entries()) {
      expect(statSync(byGoal.get(goal)!).isFile(), goal).toBe(true);
      expect(stored(goal).words).toEqual(expected[index]!.words);
    }
  });

  it('a folder that cannot be made gives no store, and one that cannot be written keeps nothing without failing', () => {
    const file = path.join(temporary, 'a-file');
    writeFileSync(file, '');
    expect(openAnalysisStore(file, 'test')).toBeNull();
    const store = openAnalysisStore<AnalyzedWord>(path.join(temporary, 'read-only'), 'test')!;
    chmodSync(store.folder, 0o500);
    try {
      setGoalAnalysisStore(store);
      clearGoalAnalysisCache();
      const [goal] = GOALS as [string];
      const expected = fresh([goal])[0];
      setGoalAnalysisStore(store);
      clearGoalAnalysisCache();
      expect(analyzeGoal(goal)).toEqual(expected);
      if (process.getuid?.() !== 0) expect(readdirSync(store.folder)).toEqual([]); // root writes anyway
    } finally {
      chmodSync(store.folder, 0o700);
    }
  });

  it('of other builds are removed when not opened for a day, but for the last ones opened', () => {
    const root = path.join(temporary, 'identities');
    const identities = path.join(root, 'goal-analyses');
    const day = STORE_STALE_MS / 1000;
    const now = Date.now() / 1000;
    // Six older builds, opened 2 to 7 days ago, and one opened an hour ago.
    for (let age = 2; age <= 7; age += 1) {
      mkdirSync(path.join(identities, `old-${age}`), { recursive: true });
      writeFileSync(path.join(identities, `old-${age}`, 'x.json'), '{}');
      utimesSync(path.join(identities, `old-${age}`), now - age * day, now - age * day);
    }
    // Three opened within the last day.
    for (let hours = 1; hours <= 3; hours += 1) {
      mkdirSync(path.join(identities, `recent-${hours}`));
      utimesSync(path.join(identities, `recent-${hours}`), now - hours * 3600, now - hours * 3600);
    }
    expect(openAnalysisStore(root, 'current')).not.toBeNull();
    // Kept: the one in use, the last ones opened before it, and any other opened within a day.
    expect(STORE_KEPT_IDENTITIES).toBe(3);
    expect(readdirSync(identities).sort()).toEqual(['current', 'recent-1', 'recent-2', 'recent-3']);
    // Days later, only the three opened last stay, the one in use among them.
    for (const [index, name] of ['current', 'recent-1', 'recent-2', 'recent-3'].entries()) {
      utimesSync(path.join(identities, name), now - 2 * day - index * 3600, now - 2 * day - index * 3600);
    }
    expect(openAnalysisStore(root, 'newest')).not.toBeNull();
    expect(readdirSync(identities).sort()).toEqual(['current', 'newest', 'recent-1']);
  });

  it('live under KLOOP_CACHE_DIR (off: none), else XDG_CACHE_HOME/kloop, else ~/.cache/kloop', () => {
    expect(cacheRoot({ KLOOP_CACHE_DIR: 'off' })).toBeNull();
    expect(cacheRoot({ KLOOP_CACHE_DIR: ' OFF ' })).toBeNull();
    expect(cacheRoot({ KLOOP_CACHE_DIR: 'rel/dir' })).toBe(path.resolve('rel/dir'));
    expect(cacheRoot({ XDG_CACHE_HOME: '/var/cache/me' })).toBe('/var/cache/me/kloop');
    expect(cacheRoot({ XDG_CACHE_HOME: 'relative' })).toMatch(/[\\/]\.cache[\\/]kloop$/);
    expect(cacheRoot({})).toMatch(/[\\/]\.cache[\\/]kloop$/);
  });

  it('are kept only by code with a build id beside it (the compiled CLI), under an identity of that build', () => {
    const previous = process.env.KLOOP_CACHE_DIR;
    process.env.KLOOP_CACHE_DIR = path.join(temporary, 'default');
    try {
      const code = path.join(temporary, 'code');
      mkdirSync(code);
      const moduleUrl = pathToFileURL(path.join(code, 'chunk.js')).href;
      expect(defaultAnalysisStore(moduleUrl)).toBeNull(); // the sources and the library: no build id
      expect(defaultAnalysisStore(import.meta.url)).toBeNull();
      writeFileSync(path.join(code, 'build-id.json'), JSON.stringify({ id: 'one' }));
      const one = defaultAnalysisStore(moduleUrl)!.folder;
      writeFileSync(path.join(code, 'build-id.json'), JSON.stringify({ id: 'two' }));
      const two = defaultAnalysisStore(moduleUrl)!.folder;
      expect(path.dirname(one)).toBe(path.join(temporary, 'default', 'goal-analyses'));
      expect(one).not.toBe(two);
      process.env.KLOOP_CACHE_DIR = 'off';
      expect(defaultAnalysisStore(moduleUrl)).toBeNull();
    } finally {
      if (previous === undefined) delete process.env.KLOOP_CACHE_DIR;
      else process.env.KLOOP_CACHE_DIR = previous;
    }
  });
});
