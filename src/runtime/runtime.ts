/**
 * The runtime API: goal text → intent → assembly onto the pattern library →
 * app specification → SQL built in in-memory SQLite → structural gates.
 *
 * It runs the ACTIVE artifact of the prompt registry, read through
 * `getActiveArtifactText`: a context-local override set by evaluation
 * (`withArtifactOverride`) is respected, and nothing else is (the artifact
 * file on disk is only used to seed a registry that has no active version,
 * exactly as `kloop run` does). The pattern library is the built-in one plus
 * the study's optional `patterns/` folder.
 *
 * Each call records a production signal (see `signal.ts`) unless
 * `recordSignals: false`; the goal text is stored unless `storeGoals: false`.
 * Evaluation (Loop A) runs with signals off: they are for real use only.
 *
 * @example
 * ```ts
 * import { createRuntime } from './runtime.ts';
 * const runtime = await createRuntime({ studyDir: 'examples/intent', db });
 * const result = await runtime.build('A clinic where patients book sessions with therapists.');
 * if (result.ok) console.log(result.assembly.method, result.gates.filter((gate) => !gate.passed));
 * ```
 */
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { contentHash } from '../artifact/content-hash.ts';
import { assembleIntent, type Assembly, type PatternUse } from '../assembly/assemble.ts';
import { buildSpec, type BuildResult } from '../assembly/build-spec.ts';
import { compileApp, type AppSpecification } from '../assembly/compile.ts';
import { runStructuralGates, type StructuralGateResult } from '../assembly/gates.ts';
import type { Pattern } from '../assembly/pattern.ts';
import { loadPatternLibrary, type PatternLibrary } from '../assembly/pattern-library.ts';
import { InputError } from '../errors.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { currentArtifactOverride, getActiveArtifactText, getRegistryVersion } from '../storage/registry.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import type { StudyPlugins } from '../study/load-study.ts';
import { loadStudy } from '../study/load-study.ts';
import { ensureSeedVersion } from '../loop/run-study.ts';
import type { Executor, InvalidReason } from '../executors/executor.ts';
import { intentSchema, type Intent } from '../tasks/intent/intent.ts';
import { requireIntentTask } from '../study/compose.ts';
import type { Behavior } from '../tasks/intent/vocabulary.ts';
import type { ProductionSignal } from '../signals/production-signal.ts';
import { recordSignal } from '../signals/production-signal.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/** Options of {@link createRuntime}: a study folder or a loaded study, and its database. */
export interface RuntimeOptions {
  /** Study folder (loaded with `loadStudy`); give this or `study`. */
  studyDir?: string;
  /** A loaded study; give this or `studyDir`. */
  study?: LoadedStudy;
  /** Plugins for `loadStudy` (LLM executors) when `studyDir` is given. */
  plugins?: StudyPlugins;
  /** The study database: the prompt registry and the signals table. */
  db: StudyDatabase;
  /** Pattern library; default: built-in + `<study>/patterns/` when that folder exists. */
  library?: PatternLibrary | readonly Pattern[];
  /** Executor; default: the study's. */
  executor?: Executor;
  /** Record a production signal per call. Default true. */
  recordSignals?: boolean;
  /** Store the goal text in signals. Default true. */
  storeGoals?: boolean;
  now?: () => Date;
  /** uuid source for signal ids. Default `crypto.randomUUID`. */
  createId?: () => string;
}

/** The assembly part of a runtime result (the assembled app itself is in `spec`). */
export interface RuntimeAssembly {
  method: Assembly['method'];
  /** In [0, 1]. */
  confidence: number;
  patterns: PatternUse[];
  uncovered: { entities: string[]; behaviors: Behavior[] };
}

/** A built app. `gates` say what passed and failed; a failed build is a failed `sql-builds` gate. */
export interface RuntimeBuildSuccess {
  ok: true;
  goal: string;
  intent: Intent;
  assembly: RuntimeAssembly;
  spec: AppSpecification;
  /** The full DDL text. */
  sql: string;
  build: BuildResult;
  gates: StructuralGateResult[];
  /** Content hash (SHA-256 hex) of the artifact that ran. */
  artifactVersion: string;
  /** Registry version id of that artifact; null under an evaluation override. */
  artifactVersionId: number | null;
  timingMs: number;
  /** Id of the recorded signal; null when signals are off. */
  signalId: string | null;
}

/** The executor produced no usable intent: invalid, never a score or a crash. No signal is recorded. */
export interface RuntimeBuildInvalid {
  ok: false;
  goal: string;
  invalid: { reason: InvalidReason; message: string; raw?: string };
  artifactVersion: string;
  artifactVersionId: number | null;
  timingMs: number;
  signalId: null;
}

export type RuntimeBuildResult = RuntimeBuildSuccess | RuntimeBuildInvalid;

/** A runtime bound to one study, database and pattern library. */
export interface Runtime {
  readonly study: LoadedStudy;
  readonly library: PatternLibrary;
  /** Runs the whole path for one goal text. Never throws for a bad goal or intent; throws for storage failures. */
  build(goal: string, options?: { signal?: AbortSignal }): Promise<RuntimeBuildResult>;
}

/** The study's pattern folder (`<study>/patterns`). */
export function studyPatternDirectory(studyDir: string): string {
  return path.join(studyDir, 'patterns');
}

/** Built-in patterns plus `<study>/patterns/` when it exists. @throws PatternLibraryError */
export function loadStudyPatternLibrary(studyDir: string): PatternLibrary {
  const folder = studyPatternDirectory(studyDir);
  return loadPatternLibrary(existsSync(folder) && statSync(folder).isDirectory() ? [folder] : []);
}

function asLibrary(library: PatternLibrary | readonly Pattern[]): PatternLibrary {
  return 'patterns' in library ? library : Object.freeze({ patterns: library, sources: Object.freeze({}) });
}

/**
 * Creates a runtime.
 *
 * @throws InputError when neither `studyDir` nor `study` is given, or the study is invalid
 * @throws PatternLibraryError when a study pattern file is invalid
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const maybeStudy =
    options.study ?? (options.studyDir !== undefined ? loadStudy(options.studyDir, options.plugins) : undefined);
  if (maybeStudy === undefined)
    throw new InputError('createRuntime needs a studyDir or a study', { field: 'studyDir' });
  requireIntentTask(maybeStudy, 'The runtime (kloop build)');
  const study: LoadedStudy = maybeStudy;
  const library = asLibrary(options.library ?? loadStudyPatternLibrary(study.dir));
  const executor = options.executor ?? study.executor;
  const now = options.now ?? (() => new Date());
  const createId = options.createId ?? randomUUID;
  const context: RuntimeContext = { study, library, executor, now, createId, db: options.db, options };
  return {
    study,
    library,
    build: (goal, buildOptions = {}) => buildGoal(context, goal, buildOptions),
  };
}

/** What a runtime's builds share. */
interface RuntimeContext {
  study: LoadedStudy;
  library: PatternLibrary;
  executor: Executor;
  now: () => Date;
  createId: () => string;
  db: RuntimeOptions['db'];
  options: RuntimeOptions;
}

/** The artifact the runtime serves: the override when one is set, else the active version (the seed registered first). */
async function activeArtifact(context: RuntimeContext): Promise<{ text: string; versionId: number | null }> {
  const { db } = context;
  if (currentArtifactOverride() !== undefined) return { text: await getActiveArtifactText(db), versionId: null };
  let active = await getRegistryVersion(db);
  if (active === undefined) active = await ensureSeedVersion(openNotebook(db), context.study, context.now);
  // Read through the registry accessor, so the override rule has one home.
  return { text: await getActiveArtifactText(db), versionId: active.id };
}

/** Builds an app from one goal: the executor's intent, assembled, compiled and checked; recorded as a signal unless turned off. */
async function buildGoal(
  context: RuntimeContext,
  goal: string,
  buildOptions: { signal?: AbortSignal },
): Promise<RuntimeBuildResult> {
  const { options, now, library } = context;
  const started = performance.now();
  const time = now().toISOString();
  const artifact = await activeArtifact(context);
  const artifactVersion = contentHash(artifact.text);
  const elapsed = (): number => performance.now() - started;
  const invalid = (reason: InvalidReason, message: string, raw?: string): RuntimeBuildInvalid => ({
    ok: false,
    goal,
    invalid: { reason, message, ...(raw !== undefined ? { raw } : {}) },
    artifactVersion,
    artifactVersionId: artifact.versionId,
    timingMs: elapsed(),
    signalId: null,
  });

  if (goal.trim() === '') return invalid('empty', 'the goal text is empty');
  let execution;
  try {
    execution = await context.executor.execute({
      input: goal,
      text: goal,
      artifact: artifact.text,
      repeat: 0,
      ...(buildOptions.signal !== undefined ? { signal: buildOptions.signal } : {}),
    });
  } catch (error) {
    return invalid('error', `executor failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!execution.ok) return invalid(execution.reason, execution.message, execution.raw);
  const parsed = intentSchema.safeParse(execution.output);
  if (!parsed.success)
    return invalid(
      'schema',
      `the intent does not fit the intent schema: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      execution.raw,
    );
  const intent = parsed.data;

  const assembly = assembleIntent(intent, library);
  const { spec, build } = compileAndBuild(assembly);
  const gates = runStructuralGates(intent, assembly, spec, build);
  const timingMs = elapsed();
  const result: RuntimeBuildSuccess = {
    ok: true,
    goal,
    intent,
    assembly: {
      method: assembly.method,
      confidence: assembly.confidence,
      patterns: assembly.patterns,
      uncovered: assembly.uncovered,
    },
    spec,
    sql: spec.sql,
    build,
    gates,
    artifactVersion,
    artifactVersionId: artifact.versionId,
    timingMs,
    signalId: null,
  };
  if (options.recordSignals !== false) {
    const signal = signalOf(result, context.createId(), time, options.storeGoals !== false);
    await recordSignal(context.db, signal, { source: 'runtime', now });
    result.signalId = signal.id;
  }
  return result;
}

/**
 * Compiles and builds; an unexpected compiler exception becomes a failed
 * build (and so a failed `sql-builds` gate) over an empty specification.
 */
function compileAndBuild(assembly: Assembly): { spec: AppSpecification; build: BuildResult } {
  try {
    const spec = compileApp(assembly.app);
    return { spec, build: buildSpec(spec) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const spec: AppSpecification = {
      appType: assembly.app.appType,
      tables: [],
      relations: [],
      views: [],
      projections: [],
      statements: [],
      sql: '',
      notes: [`compilation failed: ${message}`],
    };
    return { spec, build: { ok: false, error: { stage: 'statement', message: `compilation failed: ${message}` } } };
  }
}

/** The production signal of one successful runtime call. */
export function signalOf(result: RuntimeBuildSuccess, id: string, time: string, storeGoal: boolean): ProductionSignal {
  return {
    id,
    time,
    assemblyMethod: result.assembly.method,
    confidence: result.assembly.confidence,
    appClass: result.intent.appType,
    hasCommitments: result.intent.entities.some((entity) => entity.role === 'commitment'),
    entityCount: result.intent.entities.length,
    artifactVersion: result.artifactVersion,
    ...(storeGoal ? { goal: result.goal } : {}),
    uncoveredEntities: result.assembly.uncovered.entities,
    uncoveredBehaviors: result.assembly.uncovered.behaviors,
    patterns: result.assembly.patterns.map((use) => use.id),
    timingMs: result.timingMs,
  };
}
