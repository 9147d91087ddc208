/**
 * The checks and parsing of what `createStudy` (src/api/create-study.ts) is
 * given: the examples and their partitions, the run settings (through the
 * one study builder, src/study/study-settings.ts), and the artifact's
 * editable sections.
 */
import { studyConfigSchema } from '../config/config.ts';
import type { ExampleFormat } from '../corpus/example-format.ts';
import type { Example, PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { InputError } from '../errors.ts';
import type { parseProgram } from '../program/program.ts';
import { composeStudySettings, type StudySettings } from '../study/study-settings.ts';
import type { Task } from '../tasks/task.ts';
import type { CreateStudyOptions } from './study-types.ts';

/**
 * The examples parsed with the task's format, and the partitions.
 *
 * @throws InputError (field `examples[i]...`) for an example that does not
 *   fit, ids that repeat, or a partition with no example
 */
export function parseStudyExamples(
  options: Pick<CreateStudyOptions, 'examples'>,
  format: ExampleFormat,
): { examples: Example[]; partitions: Record<PartitionName, Example[]> } {
  const examples: Example[] = options.examples.map((record, index) => {
    const parsed = format.parse({
      id: record.id,
      input: record.input,
      expected: record.expected,
      tags: record.tags ?? [],
      partition: record.partition,
    });
    if (!parsed.success) {
      const issue = parsed.issues[0]!;
      throw new InputError(issue.message, {
        field: `examples[${index}]${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}`,
      });
    }
    return parsed.example;
  });
  if (new Set(examples.map((example) => example.id)).size !== examples.length)
    throw new InputError('example ids must be unique', { field: 'examples' });
  const partitions = Object.fromEntries(
    PARTITIONS.map((name) => [name, examples.filter((example) => example.partition === name)]),
  ) as Record<PartitionName, Example[]>;
  for (const name of PARTITIONS)
    if (partitions[name].length === 0)
      throw new InputError(`no example in the ${name} partition`, { field: 'examples' });
  return { examples, partitions };
}

/** A zod schema, as far as {@link parseSection} uses it. */
interface SafeParser<T> {
  safeParse(
    value: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } };
}

/** `value` (absent = `{}`) parsed by a `kloop.yaml` section's schema; its first issue is an InputError naming the field. */
function parseSection<T>(schema: SafeParser<T>, value: unknown, field: string): T {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new InputError(issue.message, { field: [field, ...issue.path.map(String)].join('.') });
}

/**
 * The run settings of a study built in code: the same builder and defaults as
 * `kloop run`'s (src/study/study-settings.ts).
 *
 * @throws InputError for a bad gate or stopping key, an unknown weight or
 *   weights all 0, or `gate.requireCalibration` in force without a `calibration`
 */
export function studySettingsOf(
  options: Pick<
    CreateStudyOptions,
    'gate' | 'stopping' | 'weights' | 'candidatesPerRound' | 'concurrency' | 'seed' | 'calibration'
  >,
  task: Task,
  deterministic: boolean,
): StudySettings {
  const configShape = studyConfigSchema.shape;
  const settings = composeStudySettings({
    task,
    deterministic,
    gate: parseSection(configShape.gate, options.gate, 'gate'),
    stopping: parseSection(configShape.stopping, options.stopping, 'stopping'),
    weights: options.weights,
    candidatesPerRound: options.candidatesPerRound,
    concurrency: options.concurrency,
    seed: options.seed,
  });
  if (settings.gate.requireCalibration && options.calibration === undefined) {
    // A setting in force is honoured: the library does not calibrate, so the calibration must come in.
    const why =
      options.gate?.requireCalibration === true
        ? 'gate.requireCalibration is true'
        : 'gate.requireCalibration is true by default for an executor that is not deterministic (deterministic: false), as in kloop run';
    throw new InputError(
      `${why}, but no calibration was given: pass calibration: { noiseSd, exampleSds } (as \`kloop calibrate\` measures them), or set gate: { requireCalibration: false } to run with τ = 0 (no noise allowance)`,
      {
        field: 'gate.requireCalibration',
      },
    );
  }
  return settings;
}

/**
 * Checks that every editable section program.md names is a section of the
 * artifact (as for a CLI study: a missing one would freeze everything,
 * silently).
 *
 * @throws InputError (field `sectionsOf` or `program.editableSections[i]`)
 */
export function checkEditableSections(
  options: Pick<CreateStudyOptions, 'artifact' | 'sectionsOf'>,
  program: ReturnType<typeof parseProgram>,
  sectionsOf: (text: string) => Record<string, string>,
): void {
  const sections = sectionsOf(options.artifact);
  if (typeof sections !== 'object' || sections === null)
    throw new InputError('sectionsOf must return an object of sections by name', { field: 'sectionsOf' });
  for (const [index, name] of (program.mechanical.editableSections ?? []).entries()) {
    if (Object.hasOwn(sections, name)) continue;
    const hint =
      options.sectionsOf === undefined
        ? ': give sectionsOf (text → { name: section text }) for program.md to name sections, or leave editableSections out'
        : '';
    throw new InputError(
      `"${name}" is no section of the artifact (its sections: ${Object.keys(sections).join(', ') || 'none'})${hint}`,
      { field: `program.editableSections[${index}]` },
    );
  }
}
