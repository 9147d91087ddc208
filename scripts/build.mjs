#!/usr/bin/env node
/**
 * `npm run build` (also run by `prepare`, so `npm ci` in a clone builds):
 *
 * 1. tsc compiles src/ to dist/ (JavaScript and declaration files, see
 *    tsconfig.build.json): the library, what `import 'kloop'` and its
 *    subpaths load. TypeScript's API runs in this process, so a killed
 *    build leaves no compiler behind, and its diagnostics go to stderr.
 * 2. esbuild bundles the CLI (src/cli/bin.ts) into dist/bin/: `kloop.js` and
 *    the chunks each command loads on demand. Bundling kloop's modules with
 *    the small pure-JavaScript dependencies (kysely, zod, yaml, commander …:
 *    some 400 files) makes a command start about a third faster than loading
 *    them file by file (`npm run bench:startup`). Native, large or lazily
 *    loaded packages stay external (better-sqlite3, compromise, the AI SDK,
 *    hono, stdlib …) and load from node_modules as usual. zod's error
 *    messages in other languages (`z.locales`, 64 files, half of zod's code)
 *    are left out of the bundle: kloop reports in English, zod's default
 *    (see {@link ZOD_ENGLISH_ONLY}).
 * 3. The non-TypeScript files the code reads at run time (the built-in
 *    pattern library's YAML files) are copied beside the compiled code and
 *    beside the bundle.
 * 4. `dist/bin/build-id.json`: a hash of the bundle's files, under which the
 *    CLI keeps goal analyses between runs (see analysis-store.ts).
 *
 * Each build starts from an empty folder of its own beside dist/
 * (`.dist-building-<pid>-<random>`, so a deleted source leaves no stale
 * module behind) and replaces dist/ whole when it has finished: a failed or
 * killed build leaves the previous dist/ as it was. A killed build's folder
 * is removed by a build ten minutes later (by age: a checkout may be shared
 * by builds whose process ids mean nothing here).
 *
 * `--if-stale` (the `prepare` script, and the integration tests' global
 * set-up) builds only when dist/ is not the build of the sources as they are:
 * `dist/.build-stamp`, written last, records a hash of every file the build
 * reads and one of what it wrote (scripts/build-state.mjs); when both match,
 * nothing is done. `npx kloop` in a clone installs the clone into npm's
 * cache as a linked folder, which runs `prepare`: without the check, the
 * first `npx kloop` on every machine rebuilt dist/ (10–20 s). A source
 * written during a build, even one restored before it ends, leaves dist/
 * without a stamp.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  folderHash,
  isEditorFile,
  isFile,
  outputsHash,
  readBuildStamp,
  sourcesChangedSince,
  sourcesHash,
} from './build-state.mjs';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
/** Folders of src/ whose non-TypeScript files the code reads beside itself (`new URL('./patterns/', import.meta.url)`). */
const ASSET_FOLDERS = ['assembly/patterns', 'view/pages'];
/** Packages the CLI bundle loads from node_modules: native, large, lazily loaded, or loaded with require() at run time. */
const EXTERNAL = [
  'better-sqlite3',
  'compromise',
  'ai',
  '@ai-sdk/*',
  'ollama-ai-provider-v2',
  'hono',
  'hono/*',
  '@hono/*',
  '@stdlib/*',
  'cli-table3',
  'write-file-atomic',
  'proper-lockfile',
  'esbuild',
  'isomorphic-git',
];

/**
 * An esbuild plugin: zod's locale index (`zod/v4/locales/index.js`, every
 * language's error messages, re-exported as `z.locales` and
 * `z.core.locales`) becomes one that exports English only. zod itself
 * configures English (its `schemas.js` imports `locales/en.js` directly);
 * kloop never selects another language, and the CLI then parses some 370 KB
 * less on every start. The library build (tsc, dist/ beside the bundle) is
 * untouched.
 */
const ZOD_ENGLISH_ONLY = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir)) return undefined;
      return { path: path.join(args.resolveDir, '../locales/index.js'), namespace: 'zod-english-only' };
    });
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
  },
};

/** A build's own folder (`.dist-building-*`, `.dist-previous-*`) untouched this long is a killed build's (a build takes seconds). */
const LEFTOVER_AGE_MS = 10 * 60_000;

const stampFile = path.join(dist, '.build-stamp');
// This build's folder, beside dist/: made first, its status-change time is when the build started, on the
// file system's own clock (which lags Date.now() by up to a tick): a source written from then on, even one
// restored before the end, leaves the build unstamped (see the end).
const buildId = `${process.pid}-${randomBytes(4).toString('hex')}`;
const staging = path.join(root, `.dist-building-${buildId}`);
mkdirSync(staging);
process.once('exit', () => rmSync(staging, { recursive: true, force: true }));
const startedMs = statSync(staging).ctimeMs;
for (const name of readdirSync(root)) {
  // What a killed build left behind. Ages, not process ids: a checkout may be shared by builds in other containers.
  if (!/^\.dist-(?:building|previous)-/.test(name)) continue;
  const folder = path.join(root, name);
  if (name.startsWith('.dist-previous-') && !existsSync(dist)) {
    // Killed between the two renames of its swap: its previous dist/ goes back in place (unless a build
    // swapping at this moment puts its own there first).
    try {
      renameSync(folder, dist);
    } catch {
      // that build's dist/ stands
    }
    continue;
  }
  if (startedMs - (statSync(folder, { throwIfNoEntry: false })?.mtimeMs ?? startedMs) > LEFTOVER_AGE_MS)
    rmSync(folder, { recursive: true, force: true });
}
const sources = sourcesHash(root);
if (process.argv.includes('--if-stale')) {
  const stamp = readBuildStamp(root);
  const current = stamp?.sources === sources;
  if (current && stamp.outputs === outputsHash(root)) {
    process.stderr.write(`build: dist/ is up to date with the sources (built ${stamp.builtAt}); nothing to do\n`);
    process.exit(0);
  }
  const reason = current
    ? 'dist/ was changed since it was built'
    : stamp !== undefined
      ? 'the sources changed since dist/ was built'
      : existsSync(dist)
        ? 'dist/ holds no finished build'
        : 'dist/ is missing';
  process.stderr.write(`build: ${reason}: building it\n`);
}

// The build's tools are development dependencies: without them (a clone before `npm ci`, or installed without
// them) say so, not a stack trace. As `prepare` (`--if-stale`) that is not a failure: npm hides the script's
// output from `npx kloop`, and bin/kloop.js then says itself that dist/ is missing and how to build it.
let build;
let ts;
try {
  ({ build } = await import('esbuild'));
  ts = (await import('typescript')).default;
} catch (error) {
  process.stderr.write(
    `build: the build tools (esbuild, typescript) are not installed, so dist/ is not built: run \`npm ci\` in ${root} (${error.message.split('\n')[0]})\n`,
  );
  process.exit(process.argv.includes('--if-stale') ? 0 : 1);
}

// Built in this build's folder and swapped in whole at the end: a build that fails or is killed leaves the
// previous dist/ as it was (and its stamp, which no longer matches the sources, so the next `--if-stale` tries
// again). tsc in this process (its API, as `tsc -p tsconfig.build.json --outDir <staging>`): a killed build leaves no
// compiler behind writing on, and its diagnostics go to stderr (`npm pack --json` keeps stdout for npm).
const config = ts.getParsedCommandLineOfConfigFile(
  path.join(root, 'tsconfig.build.json'),
  { outDir: staging },
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => report([diagnostic]) },
);
if (config === undefined) process.exit(1);
const program = ts.createProgram({
  rootNames: config.fileNames,
  options: config.options,
  projectReferences: config.projectReferences,
});
const emitted = program.emit();
const diagnostics = [...config.errors, ...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
if (diagnostics.length > 0) report(diagnostics);
if (emitted.emitSkipped || diagnostics.some((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error)) {
  process.stderr.write('build: tsc failed; dist/ is left as it was\n');
  process.exit(2);
}

/** Writes TypeScript diagnostics to stderr as `tsc` prints them. */
function report(list) {
  const host = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => '\n' };
  process.stderr.write(
    process.stderr.isTTY ? ts.formatDiagnosticsWithColorAndContext(list, host) : ts.formatDiagnostics(list, host),
  );
}

// The CLI bundle. Its chunks sit beside kloop.js, two folders below the package root as dist/cli/ is
// (main.ts reads ../../package.json), and the asset folders are copied beside them.
await build({
  entryPoints: [path.join(root, 'src/cli/bin.ts')],
  outdir: path.join(staging, 'bin'),
  entryNames: 'kloop',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  plugins: [ZOD_ENGLISH_ONLY],
  keepNames: true, // error classes keep their names (KloopError sets `name` from its class)
  // CommonJS dependencies inside an ES module bundle call require(): give them Node's.
  banner: {
    js: "import { createRequire as __kloopCreateRequire } from 'node:module';\nconst require = __kloopCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

for (const folder of ASSET_FOLDERS) {
  const from = path.join(root, 'src', folder);
  for (const name of readdirSync(from)) {
    const file = path.join(from, name);
    if (isEditorFile(name) || !isFile(file) || name.endsWith('.ts')) continue;
    cpSync(file, path.join(staging, folder, name));
    cpSync(file, path.join(staging, 'bin', path.basename(folder), name));
  }
}
// The bundle's identity: a hash of every file in dist/bin/. The offline executor keeps goal analyses on disk
// between runs under it (src/tasks/intent/offline/analysis-store.ts), so a store written by other code is never read.
writeFileSync(
  path.join(staging, 'bin', 'build-id.json'),
  `${JSON.stringify({ id: folderHash(path.join(staging, 'bin')).slice(0, 32) })}\n`,
);
// The swap: the previous dist/ moved aside, the new one moved in, the previous one removed. Two builds finishing
// at the same moment: the one whose dist/ is in place stands, and stamps it; the other leaves it alone.
const previous = path.join(root, `.dist-previous-${buildId}`);
try {
  renameSync(dist, previous);
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
let replaced = true;
try {
  renameSync(staging, dist);
} catch (error) {
  if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
  replaced = false;
}
rmSync(previous, { recursive: true, force: true });
if (!replaced) {
  process.stderr.write('build: another build put its dist/ in place at the same moment; it is kept\n');
  process.exit(0);
}

// Written last, so it exists only for a finished build: what `--if-stale` compares. A source changed while the
// build read it (a branch switched mid-build) may be in dist/ or not: no stamp then, and the next check rebuilds.
if (sourcesChangedSince(root, startedMs) || sourcesHash(root) !== sources) {
  process.stderr.write(
    'build: the sources changed during the build: dist/ is left unstamped, so the next `--if-stale` builds again\n',
  );
} else {
  writeFileSync(
    stampFile,
    `${JSON.stringify({ sources, outputs: outputsHash(root), builtAt: new Date().toISOString() })}\n`,
  );
}
