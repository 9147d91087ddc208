/**
 * Loads a user's JavaScript or TypeScript module from a study folder, the
 * way promptfoo loads `file://` assertions, on plain Node 20 (no tsx, no
 * loader flags).
 *
 * - The path is relative to the study folder (or absolute); a `file://`
 *   prefix is accepted and dropped, and a `:name` suffix after the file's
 *   extension names the scoring function (`file://score.ts:routeScore`, as
 *   promptfoo writes it; `score.ts#routeScore` is accepted as the same).
 * - `.js`, `.mjs`, `.cjs`: imported by Node as they are (ESM or CommonJS by
 *   Node's own rules: the extension, the nearest package.json `type`, and
 *   syntax detection).
 * - `.ts`, `.mts`, `.cts`: transpiled on load with esbuild (types
 *   stripped; enums, namespaces and decorators compiled), its relative
 *   imports (`./labels.ts`, `./helpers.js`, `./data.json`) bundled in, and
 *   its package imports (`zod`) left to Node, resolved from the study
 *   folder. `.mts` is ESM, `.cts` CommonJS; a `.ts` file is ESM when it uses
 *   `import`/`export` syntax (it does not compile as a CommonJS function
 *   body), else CommonJS. The JavaScript is written beside the source (so
 *   its package imports resolve from the study folder) as a hidden file of
 *   this process alone, `.<name>.<hash>.<pid>-<random>.kloop.mjs` (or
 *   `.cjs`), with an inline source map so stack traces can name the user's
 *   file under `--enable-source-maps`; it is written under a temporary name
 *   and renamed, so it is never seen half-written, imported, and deleted at
 *   once. Any number of processes may load one study's module at the same
 *   time (`run`, `view`, `status`, N workers on one folder): none reads or
 *   deletes another's file (issue #36, fault 6). Within a process, a module
 *   is loaded once per content: a second load of the same bytes returns the
 *   same exports. A process killed between the write and the delete leaves
 *   its file behind (`.gitignore` of `kloop init` ignores `.*.kloop.mjs`); no
 *   later load reads it.
 *
 * Why esbuild (its `transform` to read the module's syntax, its `build` to
 * bundle the relative imports): it is well kept (frequent releases, the
 * transpiler under Vite and tsx), supports all of TypeScript's syntax
 * rather than a subset, resolves a module's relative `.ts` imports (which
 * Node 20 cannot load) without a process-wide loader hook,
 * installs on Node ≥ 18 from npm with a prebuilt binary for each platform,
 * and version 0.28.2 was already in kloop's lockfile (through Vite and tsx),
 * so it adds no download. It is imported lazily, only when a `.ts` module
 * is loaded, so kloop's start-up does not pay for it. Considered: amaro
 * (Node's own type stripper; its releases need Node ≥ 22), sucrase (pure
 * JavaScript, but seven dependencies and a subset of TypeScript), and
 * TypeScript's `transpileModule` (a 23 MB dependency, slow to import).
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileFunction } from 'node:vm';
import { InputError } from '../../errors.ts';

/** Extensions a custom module may have. */
export const MODULE_EXTENSIONS = ['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'] as const;

const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);

/** A loaded module. */
export interface LoadedModule {
  /** Absolute path of the module file. */
  path: string;
  /** The path as messages name it: the study folder joined with the path as written. */
  file: string;
  /** SHA-256 of the module file's bytes, lower-case hex. */
  contentHash: string;
  /** The module's exports (for CommonJS, `module.exports` with its keys also at the top). */
  exports: Record<string, unknown>;
  /** The function name given after the path (`score.ts:name`), if any. */
  functionName?: string;
}

type Importer = (specifier: string) => Promise<Record<string, unknown>>;

/**
 * Imports through Node's own loader, not through a bundler or test runner
 * that rewrites `import()` (Vite, Vitest, ts-node): the module loads exactly
 * as it will for a user of the compiled kloop. Under plain Node a function
 * built from source text does it with the main context's loader. Where that
 * function has no import callback (code run in a `vm` context, as Vitest
 * runs it), a `vm.Script` with `USE_MAIN_CONTEXT_DEFAULT_LOADER` does; it is
 * built only then, because Node prints an ExperimentalWarning for it (before,
 * on every command of a custom-task study).
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- the point: a dynamic import no tool rewrites
const functionImport = new Function('specifier', 'return import(specifier)') as Importer;
let scriptImport: Importer | undefined;

async function nativeImport(specifier: string): Promise<Record<string, unknown>> {
  if (scriptImport === undefined) {
    try {
      return await functionImport(specifier);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING') throw error;
      const { constants, Script } = await import('node:vm');
      scriptImport = new Script('(specifier) => import(specifier)', {
        filename: 'kloop-custom-module-import',
        importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
      }).runInThisContext() as Importer;
    }
  }
  return scriptImport(specifier);
}

/**
 * Splits `file://score.ts:name` into the path and the function name. The
 * name follows the file's extension after `:` (promptfoo's form, the one
 * kloop documents) or `#` (accepted as the same).
 *
 * @example
 * ```ts
 * parseModuleReference('file://scorers/route.ts:routeScore'); // { path: 'scorers/route.ts', functionName: 'routeScore' }
 * parseModuleReference('score.ts#strict'); // { path: 'score.ts', functionName: 'strict' }
 * ```
 */
export function parseModuleReference(reference: string): { path: string; functionName?: string } {
  const path = reference.startsWith('file://') ? reference.slice('file://'.length) : reference;
  const match = /^(.*\.(?:[cm]?[jt]s))[:#]([A-Za-z_$][\w$]*)$/.exec(path);
  return match === null ? { path } : { path: match[1]!, functionName: match[2]! };
}

/** True when JavaScript source does not compile as a CommonJS function body because of module syntax. */
function isModuleSyntax(code: string, file: string): boolean {
  try {
    compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: file });
    return false;
  } catch (error) {
    return error instanceof SyntaxError;
  }
}

/** Transpiles a TypeScript module and the relative modules it imports into one JavaScript file. */
async function transpile(
  source: string,
  path: string,
  extension: string,
  outfile: string,
  file: string,
): Promise<{ code: string; esm: boolean }> {
  const esbuild = await import('esbuild');
  try {
    let esm = extension === '.mts';
    if (extension === '.ts') {
      const alone = await esbuild.transform(source, { loader: 'ts', sourcefile: path, target: 'node20' });
      esm = isModuleSyntax(alone.code, path);
    }
    const result = await esbuild.build({
      entryPoints: [path],
      outfile: outfile.replace(/\.c?m?js$/, esm ? '.mjs' : '.cjs'),
      bundle: true,
      packages: 'external',
      platform: 'node',
      target: 'node20',
      format: esm ? 'esm' : 'cjs',
      sourcemap: 'inline',
      write: false,
      logLevel: 'silent',
    });
    return { code: result.outputFiles[0]!.text, esm };
  } catch (error) {
    const detail = (
      error as { errors?: Array<{ text: string; location?: { file: string; line: number; column: number } | null }> }
    ).errors?.[0];
    const where = detail?.location
      ? ` (${detail.location.file}:${detail.location.line}:${detail.location.column})`
      : '';
    throw new InputError(
      `cannot transpile the TypeScript module${where}: ${detail?.text ?? (error as Error).message}`,
      {
        file,
        code: 'custom_module',
        cause: error,
      },
    );
  }
}

/**
 * Loads a module of the study folder.
 *
 * @param studyFolder the study folder (absolute, or relative to the working directory)
 * @param reference the module's path relative to the study folder (or absolute), optionally `file://…` and `:functionName`
 * @throws InputError (code `custom_module`, `file` set) when the file is
 *   missing or has another extension, its TypeScript does not transpile, the
 *   folder is not writable for the transpiled file, or importing it throws
 *   (a syntax error, a failing import, a throw at the top level)
 */
export async function loadStudyModule(studyFolder: string, reference: string): Promise<LoadedModule> {
  const { path: written, functionName } = parseModuleReference(reference);
  const path = isAbsolute(written) ? written : resolve(studyFolder, written);
  const file = isAbsolute(written) ? written : join(studyFolder, written);
  const extension = extname(path).toLowerCase();
  if (!(MODULE_EXTENSIONS as readonly string[]).includes(extension)) {
    throw new InputError(
      `a custom module must be JavaScript or TypeScript (${MODULE_EXTENSIONS.join(', ')}); got "${basename(path)}"`,
      { file, code: 'custom_module' },
    );
  }
  if (!existsSync(path)) throw new InputError('the custom module does not exist', { file, code: 'custom_module' });
  const bytes = readFileSync(path);
  const contentHash = createHash('sha256').update(bytes).digest('hex');
  const key = `${path}\u0000${contentHash}`;
  let loading = loaded.get(key);
  if (loading === undefined) {
    loading = importModule(path, file, extension, bytes, contentHash);
    loaded.set(key, loading);
    // A failed load is not kept: the next load tries again (and fails with its own message).
    loading.catch(() => loaded.delete(key));
  }
  const result: LoadedModule = { path, file, contentHash, exports: { ...(await loading) } };
  if (functionName !== undefined) result.functionName = functionName;
  return result;
}

/** This process's loads, by module path and content hash. */
const loaded = new Map<string, Promise<Record<string, unknown>>>();

/** Writes `code` to a new file of this process beside the module, atomically (temporary name, then rename). */
function writeTranspiled(path: string, contentHash: string, esm: boolean, code: string, file: string): string {
  const unique = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const stem = join(dirname(path), `.${basename(path)}.${contentHash.slice(0, 12)}.${unique}`);
  const extension = esm ? 'mjs' : 'cjs';
  const target = `${stem}.kloop.${extension}`;
  const partial = `${stem}.partial.kloop.${extension}`; // ignored by the same .gitignore line while it exists
  try {
    writeFileSync(partial, code, { encoding: 'utf8', flag: 'wx' });
    renameSync(partial, target);
  } catch (error) {
    removeQuietly(partial);
    throw new InputError(`cannot write the transpiled module beside it (${(error as Error).message})`, {
      file,
      code: 'custom_module',
      cause: error,
    });
  }
  return target;
}

function removeQuietly(target: string): void {
  try {
    unlinkSync(target);
  } catch {
    // already gone (or never written)
  }
}

/** Transpiles (TypeScript) and imports a module; the transpiled file is deleted once imported. */
async function importModule(
  path: string,
  file: string,
  extension: string,
  bytes: Buffer,
  contentHash: string,
): Promise<Record<string, unknown>> {
  let target = path;
  let temporary: string | undefined;
  if (TYPESCRIPT_EXTENSIONS.has(extension)) {
    const stem = join(dirname(path), `.${basename(path)}.${contentHash.slice(0, 12)}.kloop`);
    const { code, esm } = await transpile(bytes.toString('utf8'), path, extension, `${stem}.js`, file);
    temporary = writeTranspiled(path, contentHash, esm, code, file);
    target = temporary;
  }
  try {
    const url = pathToFileURL(target);
    url.searchParams.set('kloop', contentHash.slice(0, 12)); // a new version of the file is a new module
    return await nativeImport(url.href);
  } catch (error) {
    throw new InputError(`cannot load the custom module: ${(error as Error).message}`, {
      file,
      code: 'custom_module',
      cause: error,
    });
  } finally {
    if (temporary !== undefined) removeQuietly(temporary);
  }
}
