/**
 * `kloop build <study> "goal text"`: the runtime path for one goal — the
 * intent (from the active artifact of the prompt registry), its assembly onto
 * the pattern library, the structural gates and the generated SQL. Records a
 * production signal (turn off with `--no-signal`, or keep the goal text out
 * with `--no-store-goal`).
 *
 * Exit codes: 0 the SQL was built (failed gates other than `sql-builds` are
 * reported, not fatal); 1 the intent was invalid or the SQL did not build;
 * 2 bad input.
 */
import { MAX_GOAL_CHARACTERS } from '../../corpus/intent-example.ts';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { createRuntime, type RuntimeBuildResult } from '../../runtime/runtime.ts';
import { formatScore, print, printJson } from '../output.ts';
import type { ModelOptions } from './study-session.ts';
import { addModelOptions, openStudy, refuseNonIntentStudy } from './study-session.ts';

interface BuildOptions extends ModelOptions {
  json?: boolean;
  /** commander's `--no-signal` */
  signal?: boolean;
  /** commander's `--no-store-goal` */
  storeGoal?: boolean;
}

export function registerBuildCommand(program: Command): void {
  addModelOptions(
    program
      .command('build')
      .description(
        'Build an app from one goal text: intent, assembly onto the pattern library, structural gates and SQL.',
      )
      .argument('<study>', 'study folder (its active artifact and its patterns/ folder are used)')
      .argument('<goal>', 'the goal text, e.g. "a clinic where patients book sessions with therapists"')
      .option('--json', 'print one JSON object on stdout')
      .option('--no-signal', 'do not record a production signal for this call')
      .option('--no-store-goal', 'record the signal without the goal text'),
  )
    .addHelpText(
      'after',
      '\nExit codes: 0 built (failed gates are reported), 1 invalid intent or SQL that does not build, 2 bad input.',
    )
    .action(async (studyDir: string, goal: string, options: BuildOptions) => {
      if (goal.trim() === '') throw new InputError('the goal text is empty', { field: 'goal' });
      // The corpus and the signal schema cap a goal at this length; a longer one would be stored as a signal nothing can read back.
      if (goal.trim().length > MAX_GOAL_CHARACTERS)
        throw new InputError(
          `the goal text has ${goal.trim().length} characters, more than the ${MAX_GOAL_CHARACTERS} a goal may have`,
          { field: 'goal' },
        );
      refuseNonIntentStudy(studyDir, 'kloop build');
      const session = await openStudy(studyDir, {
        ...options,
        quiet: options.quiet ?? options.json === true,
        modelCalls: 'executor',
      });
      try {
        const runtime = await createRuntime({
          study: session.study,
          db: session.db,
          recordSignals: options.signal !== false,
          storeGoals: options.storeGoal !== false,
        });
        const result = await runtime.build(goal);
        if (options.json === true) printJson(buildJson(result));
        else printBuild(result);
        process.exitCode = result.ok && result.build.ok ? 0 : 1;
      } finally {
        await session.close();
      }
    });
}

/** The `--json` object of `kloop build`. */
export function buildJson(result: RuntimeBuildResult) {
  if (!result.ok) {
    return {
      ok: false as const,
      goal: result.goal,
      invalid: result.invalid,
      intent: null,
      assembly: null,
      gates: [],
      sql: null,
      artifactVersion: result.artifactVersion,
      artifactVersionId: result.artifactVersionId,
      timingMs: result.timingMs,
      signalId: null,
    };
  }
  return {
    ok: true as const,
    goal: result.goal,
    intent: result.intent,
    assembly: result.assembly,
    gates: result.gates,
    gatesPassed: result.gates.filter((gate) => gate.passed).length,
    gatesFailed: result.gates.filter((gate) => !gate.passed).length,
    build: result.build,
    sql: result.sql,
    spec: {
      tables: result.spec.tables,
      relations: result.spec.relations,
      views: result.spec.views,
      projections: result.spec.projections,
      notes: result.spec.notes,
    },
    artifactVersion: result.artifactVersion,
    artifactVersionId: result.artifactVersionId,
    timingMs: result.timingMs,
    signalId: result.signalId,
  };
}

function printBuild(result: RuntimeBuildResult): void {
  const version = `${result.artifactVersionId !== null ? `version ${result.artifactVersionId}, ` : ''}${result.artifactVersion.slice(0, 12)}`;
  if (!result.ok) {
    print(`INVALID intent (${result.invalid.reason}): ${result.invalid.message}`);
    print(`artifact: ${version}`);
    return;
  }
  const { intent, assembly } = result;
  print(`intent: ${intent.appType}`);
  print(`  entities: ${intent.entities.map((entity) => `${entity.name} (${entity.role})`).join(', ') || '—'}`);
  print(
    `  relations: ${intent.relations.map((relation) => `${relation.from} → ${relation.to}${relation.cardinality !== undefined ? ` ${relation.cardinality}` : ''}`).join(', ') || '—'}`,
  );
  print(`  behaviours: ${intent.behaviors.join(', ') || '—'}`);
  print(`  projections: ${intent.projections.join(', ') || '—'}`);
  print();
  print(`assembly: ${assembly.method}, confidence ${formatScore(assembly.confidence)}`);
  for (const use of assembly.patterns) {
    print(
      `  pattern ${use.id}: ${use.coveredEntities.join(', ') || '—'}${use.coveredBehaviors.length > 0 ? `; ${use.coveredBehaviors.join(', ')}` : ''}`,
    );
  }
  print(`  uncovered entities: ${assembly.uncovered.entities.join(', ') || 'none'}`);
  print(`  uncovered behaviours: ${assembly.uncovered.behaviors.join(', ') || 'none'}`);
  print();
  const failed = result.gates.filter((gate) => !gate.passed);
  print(`gates: ${result.gates.length - failed.length} passed, ${failed.length} failed`);
  for (const gate of result.gates) print(`  ${gate.passed ? 'PASS' : 'FAIL'} ${gate.name}: ${gate.message}`);
  print();
  print(
    `artifact: ${version}; ${result.timingMs.toFixed(0)} ms${result.signalId !== null ? `; signal ${result.signalId}` : ''}`,
  );
  print();
  print('-- SQL');
  print(result.sql);
}
