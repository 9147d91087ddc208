/**
 * The runtime path after intent extraction: pattern library → assembly →
 * compilation → SQLite build → structural gates (Loop A's evaluator).
 *
 * ```ts
 * import { buildFromIntent, loadPatternLibrary, loopAScore } from './assembly/index.ts';
 *
 * const library = loadPatternLibrary(['./my-patterns']);
 * const result = buildFromIntent(intent, library);
 * result.assembly.method; // 'direct' | 'decomposed' | 'partial'
 * result.gates.every((gate) => gate.passed);
 * loopAScore([result]).score;
 * ```
 */
import type { Intent } from '../tasks/intent/intent.ts';
import { assembleIntent, type Assembly } from './assemble.ts';
import { buildSpec, type BuildResult } from './build-spec.ts';
import { compileApp, type AppSpecification } from './compile.ts';
import { runStructuralGates, type StructuralGateResult } from './gates.ts';
import type { Pattern } from './pattern.ts';
import type { PatternLibrary } from './pattern-library.ts';

export {
  assembleIntent,
  CONFIDENCE_WEIGHTS,
  matchCredit,
  type Assembly,
  type AssemblyMethod,
  type PatternUse,
} from './assemble.ts';
export {
  ROLE_DEFAULT_FIELDS,
  type AppEntity,
  type AppEntitySource,
  type AppField,
  type AppProjection,
  type AppRelation,
  type AssembledApp,
  type EntityMatchKind,
} from './assembled-app.ts';
export { buildSpec, type BuildResult } from './build-spec.ts';
export {
  compileApp,
  createTableSql,
  type AppSpecification,
  type ColumnOrigin,
  type RelationImplementation,
  type SpecColumn,
  type SpecProjection,
  type SpecRelation,
  type SpecTable,
  type SpecView,
} from './compile.ts';
export { DEFAULT_KANBAN_LANES } from './compile-views.ts';
export { defaultCardinality } from './create-assembled-app.ts';
export {
  LOOP_A_WEIGHTS,
  loopAScore,
  runStructuralGates,
  STRUCTURAL_GATE_NAMES,
  type LoopAExample,
  type LoopAScore,
  type StructuralGateName,
  type StructuralGateResult,
} from './gates.ts';
export { matchPattern, type EntityMatch, type PatternMatch } from './match.ts';
export {
  FIELD_TYPES,
  patternSchema,
  TIME_FIELD_TYPES,
  timeFieldOf,
  type FieldType,
  type Pattern,
  type PatternEntity,
  type PatternField,
  type PatternInput,
  type PatternProjection,
  type PatternRelation,
} from './pattern.ts';
export {
  BUILT_IN_PATTERN_DIRECTORY,
  createPatternLibrary,
  formatPatternIssue,
  loadBuiltInPatternLibrary,
  loadPatternLibrary,
  parsePatternText,
  PatternLibraryError,
  type LoadPatternLibraryOptions,
  type PatternIssue,
  type PatternLibrary,
  type PatternParseResult,
} from './pattern-library.ts';
export { isReservedWord, isValidIdentifier, SQL_RESERVED_WORDS, tableNameForEntity } from './sql-names.ts';

/** Everything Loop A needs about one intent. */
export interface BuildFromIntentResult {
  assembly: Assembly;
  spec: AppSpecification;
  build: BuildResult;
  gates: StructuralGateResult[];
}

/**
 * Assemble, compile, build and gate one intent. Never throws for a valid
 * intent: a SQL failure is `build.ok === false` and a failed `sql-builds` gate.
 */
export function buildFromIntent(intent: Intent, library: PatternLibrary | readonly Pattern[]): BuildFromIntentResult {
  const assembly = assembleIntent(intent, library);
  const spec = compileApp(assembly.app);
  const build = buildSpec(spec);
  const gates = runStructuralGates(intent, assembly, spec, build);
  return { assembly, spec, build, gates };
}
