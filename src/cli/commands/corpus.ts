/**
 * `kloop corpus …`: the corpus lifecycle and importers (docs/corpus.md).
 *
 * - `corpus add <study> <file>`: admission (quality gate; admitted examples
 *   enter shadow). Exit 0 when every record was admitted, 4
 *   ({@link ADMISSION_REFUSED_EXIT_CODE}) when any was refused (the others
 *   are admitted), 2 when the batch cannot be read (nothing written).
 * - `corpus promote <study> <id…> --to PARTITION --by NAME`: a human moves
 *   examples, recorded in the corpus history.
 * - `corpus status <study>`: partitions, sizes, exposures, what is due.
 * - `corpus at <study> <experiment>`: the partitions a decision saw.
 * - `corpus import --format golden-uml|jsonl|yaml <path> --out FILE.jsonl`:
 *   examples in the public format, with a per-case account of what could not
 *   be read.
 */
import { existsSync, statSync } from 'node:fs';
import { EXIT } from '../session/exit-codes.ts';
import path from 'node:path';
import { describeFlakyExamples, findFlakyExamples } from '../../evaluator/flaky-examples.ts';
import type { Command } from 'commander';
import { readCandidateRecords } from '../../corpus/admission.ts';
import type { IntentExampleRecord } from '../../corpus/intent-example.ts';
import { asIntentExamples, intentRecord } from '../../corpus/intent-example.ts';
import { PARTITIONS } from '../../corpus/example.ts';
import { readCorpusFile } from '../../corpus/importers/public-format.ts';
import { importGoldenUml } from '../../corpus/importers/golden-uml.ts';
import { InputError } from '../../errors.ts';
import type { PartitionScore } from '../../evaluator/partition-score.ts';
import { scoreNamesOf } from '../../evaluator/evaluator.ts';
import type { LoadedStudy } from '../../loop/loaded-study.ts';
import { sync as writeFileAtomic } from 'write-file-atomic';
import { createStudyEvaluator } from '../../loop/evaluate-partition.ts';
import { formatScore, metricsLine, print, printJson, progress, table } from '../output.ts';
import { corpusAddCommand, corpusPromoteCommand } from './corpus-writes.ts';
import { corpusAtCommand, corpusStatusCommand } from './corpus-reads.ts';

/**
 * Exit code of `kloop corpus add` when the gate refused one or more records:
 * 4. Every refusal is listed (and, unless `--dry-run`, recorded in the corpus
 * history); the records admitted, if any, are in the study. Never 2, which
 * means bad input with nothing written (a batch file that cannot be read).
 */
export const ADMISSION_REFUSED_EXIT_CODE = EXIT.admissionRefused;

/** Formats accepted by `kloop corpus import`. */
export const IMPORT_FORMATS = ['golden-uml', 'jsonl', 'yaml'] as const;

export function registerCorpusCommands(program: Command): void {
  const corpus = program
    .command('corpus')
    .description('The corpus lifecycle: admission, status, history and importers (docs/corpus.md).');

  corpus
    .command('add')
    .description(
      'Admit examples into a study: each passes the quality gate (schema, vocabularies, non-trivial gold, grounded entities, no near-duplicate, no duplicate id) and enters the shadow partition. Exit 0 when every record was admitted, 4 when any was refused (the others are admitted; refusals are listed and recorded), 2 when the file cannot be read.',
    )
    .argument('<study>', 'study folder')
    .argument('<file>', 'examples in the public format (.jsonl, .yaml, .yml, .json)')
    .option('--partial-gold', 'admit gold without an app type (entities are still required)')
    .option('--dry-run', 'check only; write nothing')
    .option('--wait', 'wait for a run in progress to finish instead of refusing (exit 3)')
    .option('--json', 'print one JSON object on stdout')
    .action(corpusAddCommand);

  corpus
    .command('promote')
    .description(
      "Move examples to a partition by hand, on the record (a `promoted` event naming you in the corpus history); promote again to undo. The corpus files' labels do not override it.",
    )
    .argument('<study>', 'study folder')
    .argument('<id...>', 'example ids (see `kloop corpus status`)')
    .requiredOption('--to <partition>', `one of ${PARTITIONS.join(', ')}`)
    .requiredOption('--by <name>', 'who decides (recorded with the move)')
    .option('--reason <text>', 'why (recorded with the move)')
    .option('--wait', 'wait for a run in progress to finish instead of refusing (exit 3)')
    .option('--json', 'print one JSON object on stdout')
    .action(corpusPromoteCommand);

  corpus
    .command('status')
    .description(
      'Show the corpus lifecycle: partitions, sizes, shadow exposures and what is due to graduate or rotate.',
    )
    .argument('<study>', 'study folder')
    .option('--json', 'print one JSON object on stdout')
    .action(corpusStatusCommand);

  corpus
    .command('at')
    .description('Reconstruct the partitions (and shadow exposures) as they were when an experiment was decided.')
    .argument('<study>', 'study folder')
    .argument('<experiment>', 'experiment id (see `kloop history`)')
    .option('--json', 'print one JSON object on stdout')
    .action(corpusAtCommand);

  corpus
    .command('import')
    .description(
      'Convert a corpus to the public format (JSON Lines), reporting per case what could not be read. Written atomically.',
    )
    .argument('<path>', 'a Golden UML folder of case folders, or a .jsonl/.yaml file')
    .requiredOption('--format <format>', `one of ${IMPORT_FORMATS.join(', ')}`)
    .requiredOption('--out <file>', 'the .jsonl file to write')
    .option('--json', 'print one JSON object on stdout')
    .action(corpusImportCommand);
}

/** `kloop corpus import --format golden-uml|jsonl|yaml <path> --out FILE.jsonl`: examples in the public format, with a per-case account of what could not be read. */
async function corpusImportCommand(
  source: string,
  options: { format: string; out: string; json?: boolean },
): Promise<void> {
  if (!(IMPORT_FORMATS as readonly string[]).includes(options.format))
    throw new InputError(`unknown format "${options.format}"; expected one of ${IMPORT_FORMATS.join(', ')}`, {
      field: '--format',
    });
  if (!options.out.toLowerCase().endsWith('.jsonl'))
    throw new InputError('the output is JSON Lines: give a file ending in .jsonl', {
      field: '--out',
      file: options.out,
    });
  const out = path.resolve(options.out);
  if (!existsSync(path.dirname(out)))
    throw new InputError(`the folder ${path.dirname(out)} does not exist`, { field: '--out', file: out });
  const result = importCorpus(path.resolve(source), options.format as (typeof IMPORT_FORMATS)[number]);
  writeFileAtomic(
    out,
    result.examples.map((example) => JSON.stringify(example)).join('\n') + (result.examples.length > 0 ? '\n' : ''),
  );
  const payload = {
    format: options.format,
    source: path.resolve(source),
    out,
    examples: result.examples.length,
    cases: result.cases,
  };
  if (options.json === true) {
    printJson(payload);
    return;
  }
  print(
    `wrote ${result.examples.length} example(s) to ${out} (${result.cases.filter((entry) => entry.exampleId === undefined).length} case(s) not imported)`,
  );
  for (const entry of result.cases) {
    if (entry.skipped.length === 0) continue;
    print(`  ${entry.case}${entry.exampleId === undefined ? ' NOT IMPORTED' : ` → ${entry.exampleId}`}`);
    for (const skipped of entry.skipped) print(`      could not read: ${skipped}`);
  }
}

/** One case of an import: what became of it. */
export interface ImportedCase {
  /** Case folder, or `file:line`. */
  case: string;
  exampleId?: string;
  /** What could not be read or mapped. */
  skipped: string[];
  notes: string[];
}

/** Reads a corpus in one of {@link IMPORT_FORMATS}: the examples that could be read, and an account per case. */
export function importCorpus(
  source: string,
  format: (typeof IMPORT_FORMATS)[number],
): { examples: IntentExampleRecord[]; cases: ImportedCase[] } {
  if (format === 'golden-uml') {
    if (!existsSync(source) || !statSync(source).isDirectory())
      throw new InputError('a Golden UML import reads a folder of case folders', { file: source });
    const imported = importGoldenUml(source);
    return {
      examples: imported.examples,
      cases: imported.reports.map((report) => ({
        case: report.caseId,
        ...(report.exampleId !== undefined ? { exampleId: report.exampleId } : {}),
        skipped: report.skipped,
        notes: report.notes,
      })),
    };
  }
  const extension = path.extname(source).toLowerCase();
  const matches = format === 'jsonl' ? extension === '.jsonl' : ['.yaml', '.yml', '.json'].includes(extension);
  if (!matches)
    throw new InputError(`--format ${format} does not match the file's extension "${extension}"`, {
      file: source,
      field: '--format',
    });
  const read = readCandidateRecords(source);
  if (!read.ok) {
    const first = read.errors[0]!;
    throw new InputError(first.message, {
      file: first.file,
      ...(first.line !== undefined ? { line: first.line } : {}),
      ...(first.field !== undefined ? { field: first.field } : {}),
    });
  }
  const examples: IntentExampleRecord[] = [];
  const seen = new Set<string>();
  const cases = read.records.map((record): ImportedCase => {
    const label = `${source}:${record.line ?? record.index + 1}`;
    if (record.example === undefined) {
      return {
        case: label,
        skipped: record.errors.map((error) => `${error.field !== undefined ? `${error.field}: ` : ''}${error.message}`),
        notes: [],
      };
    }
    if (seen.has(record.example.id))
      return { case: label, skipped: [`duplicate id "${record.example.id}" (kept the first)`], notes: [] };
    seen.add(record.example.id);
    examples.push(intentRecord(asIntentExamples([record.example])[0]!));
    return { case: label, exampleId: record.example.id, skipped: [], notes: [] };
  });
  return { examples, cases };
}

/**
 * Sets exit code 1, with a line on stderr, when every output of `score` was
 * invalid: nothing valid came back, so there is no composite. `outputs` names
 * them in the line (Loop A's are intents).
 */
export function failWhenNothingValid(
  score: {
    total: number;
    invalid: number;
    examples: ReadonlyArray<{ valid: true } | { valid: false; invalidReason: string }>;
  },
  outputs = 'outputs',
): void {
  if (score.total === 0 || score.invalid < score.total) return;
  const reasons = new Map<string, number>();
  for (const record of score.examples)
    if (!record.valid) reasons.set(record.invalidReason, (reasons.get(record.invalidReason) ?? 0) + 1);
  const byReason = [...reasons]
    .sort((left, right) => right[1] - left[1])
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ');
  progress(
    `kloop: nothing valid came back: ${score.invalid} of ${score.total} ${outputs} are invalid (${byReason}); there is no composite (exit 1)`,
  );
  process.exitCode = 1;
}

/**
 * `kloop eval <study> --corpus FILE`: scores `artifactText` on every example
 * of a public-format file (its `partition` fields are not used) and prints,
 * with partial gold, which components were scored on how many examples.
 */
export async function evaluateCorpusFile(
  study: LoadedStudy,
  artifactText: string,
  artifactLabel: string,
  file: string,
  options: { json?: boolean; quiet?: boolean },
): Promise<void> {
  const read = readCorpusFile(path.resolve(file), study.exampleFormat);
  if (!read.ok) {
    const first = read.errors[0]!;
    throw new InputError(
      `${first.message}${read.errors.length > 1 ? ` (and ${read.errors.length - 1} more errors)` : ''}`,
      {
        file: first.file,
        ...(first.line !== undefined ? { line: first.line } : {}),
        ...(first.field !== undefined ? { field: first.field } : {}),
      },
    );
  }
  if (read.examples.length === 0)
    throw new InputError('the file holds no examples: nothing to evaluate', {
      file: path.resolve(file),
      field: '--corpus',
    });
  const evaluator = createStudyEvaluator(study);
  const score = await evaluator.evaluate({
    artifactText,
    partition: `file:${path.basename(file)}`,
    examples: read.examples,
    repeats: study.gate.repeats,
  });
  const payload = corpusFileReport(study, artifactLabel, path.resolve(file), evaluator.fingerprint, score);
  failWhenNothingValid(score);
  if (options.json === true) {
    printJson(payload);
    return;
  }
  print(`${artifactLabel} on ${payload.file} (${payload.examples} examples; evaluator ${payload.fingerprint})`);
  print(`composite ${formatScore(payload.composite)}, invalid ${payload.invalid}`);
  print(
    table([
      ['component', 'mean', 'scored on', 'skipped on'],
      ...Object.keys(payload.scoredOn).map((name) => [
        name,
        formatScore(payload.components[name] ?? null),
        String(payload.scoredOn[name]),
        String(payload.skippedOn[name]),
      ]),
    ]),
  );
  const metrics = metricsLine(payload.metrics);
  if (metrics !== '') print(metrics);
  const flaky = describeFlakyExamples(payload.flaky);
  if (flaky !== null) print(flaky);
  if (options.quiet === true) return;
  print();
  for (const example of payload.perExample) {
    if (!example.valid) print(`${example.id}  INVALID (${example.invalidReason})`);
    else
      print(
        `${example.id}  ${formatScore(example.composite)}  scored: ${example.scored.join(', ')}${example.skipped.length > 0 ? `; skipped: ${example.skipped.join(', ')}` : ''}`,
      );
  }
}

/** The weighted components of the study's task (the composite's), in the task's order. */
function weightedComponents(study: LoadedStudy): string[] {
  return scoreNamesOf(study.task).components.filter((name) => (study.weights[name] ?? 0) > 0);
}

function corpusFileReport(
  study: LoadedStudy,
  artifact: string,
  file: string,
  fingerprint: string,
  score: PartitionScore,
) {
  const names = weightedComponents(study);
  const scoredOn: Record<string, number> = Object.fromEntries(names.map((name) => [name, 0]));
  const skippedOn: Record<string, number> = { ...scoredOn };
  const perExample = score.examples.map((record) => {
    if (!record.valid)
      return {
        id: record.exampleId,
        repeat: record.repeat,
        valid: false as const,
        composite: null,
        invalidReason: record.invalidReason,
        message: record.message,
      };
    for (const name of names) {
      if (Object.hasOwn(record.components, name)) scoredOn[name]! += 1;
      else if (record.skipped.includes(name)) skippedOn[name]! += 1;
    }
    return {
      id: record.exampleId,
      repeat: record.repeat,
      valid: true as const,
      composite: record.composite,
      components: record.components,
      scored: names.filter((name) => Object.hasOwn(record.components, name)),
      skipped: record.skipped,
      metrics: record.metrics,
      diagnostics: record.diagnostics,
    };
  });
  return {
    study: study.dir,
    artifact,
    file,
    fingerprint,
    examples: score.total,
    composite: score.composite,
    components: score.components,
    /** With repeats, the examples whose outcome varies across them (src/evaluator/flaky-examples.ts). */
    flaky: findFlakyExamples(score.examples),
    metrics: score.metrics,
    invalid: score.invalid,
    scoredOn,
    skippedOn,
    perExample,
  };
}
