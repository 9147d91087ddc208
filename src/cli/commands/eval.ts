/** `kloop eval <study>`: score one artifact and print components and per-example diagnostics. */
import path from 'node:path';
import type { Command } from 'commander';
import type { Example, PartitionName } from '../../corpus/example.ts';
import { PARTITIONS } from '../../corpus/example.ts';
import { InputError } from '../../errors.ts';
import type { ExampleScoreRecord, PartitionScore } from '../../evaluator/partition-score.ts';
import { UNSCORED_REASON, describeUnscored } from '../../evaluator/partition-score.ts';
import { aggregate, scoreNamesOf, scorerErrors } from '../../evaluator/evaluator.ts';
import { describeFlakyExamples, findFlakyExamples } from '../../evaluator/flaky-examples.ts';
import { headlineValue } from '../../loop/loaded-study.ts';
import { getRegistryVersion } from '../../storage/registry.ts';
import { readTextFile } from '../../study/load-study.ts';
import { createStudyEvaluator } from '../../loop/evaluate-partition.ts';
import { componentColumns, formatScore, metricsLine, print, printJson, table } from '../output.ts';
import type { ModelOptions, StudySession } from './study-session.ts';
import { addModelOptions, openStudy } from './study-session.ts';
import { evalLoopACommand, parseLoopOption } from './loop-a.ts';
import { evaluateCorpusFile, failWhenNothingValid } from './corpus.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

export function registerEvalCommand(program: Command): void {
  addModelOptions(
    program
      .command('eval')
      .description(
        'Score one artifact (default: the active version) on the study corpus and print components and per-example diagnostics.',
      )
      .argument('<study>', 'study folder')
      .option('--partition <name>', `one partition (${PARTITIONS.join(', ')}); default: all`)
      .option('--artifact <file>', 'artifact file to score instead of the active version')
      .option('--json', 'print one JSON object on stdout')
      .option('--quiet', 'print only the summary, not every example')
      .option(
        '--loop <A|B>',
        'B: the task composite (default); A: end-to-end, intent studies only (compile success, structural gates, Loop A composite)',
      )
      .option(
        '--corpus <file>',
        'score on the examples of this public-format file (.jsonl, .yaml) instead of the study corpus; partial gold says which components were scored',
      ),
  ).action(evalCommand);
}

/** Options of `kloop eval`. */
type EvalOptions = ModelOptions & {
  partition?: string;
  artifact?: string;
  json?: boolean;
  quiet?: boolean;
  corpus?: string;
};

/** `kloop eval`'s action: scores one artifact on the study's partitions (or a corpus file) and prints the summary and every example. */
async function evalCommand(studyDir: string, options: EvalOptions): Promise<void> {
  if (parseLoopOption((options as { loop?: string }).loop) === 'A') return evalLoopACommand(studyDir, options);
  if (options.partition !== undefined && !(PARTITIONS as readonly string[]).includes(options.partition)) {
    throw new InputError(`unknown partition "${options.partition}"; expected one of ${PARTITIONS.join(', ')}`, {
      field: '--partition',
    });
  }
  if (options.corpus !== undefined && options.partition !== undefined) {
    // A corpus file is scored whole, its records' partitions aside: --partition would be ignored.
    throw new InputError('--partition does not apply to --corpus (the file is scored whole); leave one out', {
      field: '--partition',
    });
  }
  const session = await openStudy(studyDir, { ...options, preferWritable: true, modelCalls: 'executor' });
  try {
    const { artifactText, artifactLabel } = await chosenArtifact(session, options.artifact);
    if (options.corpus !== undefined) {
      await evaluateCorpusFile(session.study, artifactText, artifactLabel, options.corpus, options);
      return;
    }
    const scored = await scorePartitions(session, artifactText, artifactLabel, options);
    const payload = evalPayload(session.study, scored);
    // Nothing valid came back: there is no score, and a script must not read this as one (exit 1).
    failWhenNothingValid(scored.all);
    if (options.json === true) {
      printJson(payload);
      return;
    }
    printEvalSummary(session.study, scored, payload);
    if (options.quiet === true) return;
    print();
    printEvalExamples(payload, scored.all.repeats);
  } finally {
    await session.close();
  }
}

/** The artifact `kloop eval` scores: `--artifact FILE`, else the active version (the seed file before any run). */
async function chosenArtifact(
  session: StudySession,
  file: string | undefined,
): Promise<{ artifactText: string; artifactLabel: string }> {
  if (file !== undefined)
    return { artifactText: readTextFile(path.resolve(file), 'the artifact file'), artifactLabel: path.resolve(file) };
  const active = await getRegistryVersion(session.db);
  return {
    artifactText: active?.text ?? session.study.artifactText,
    artifactLabel:
      active !== undefined ? `active version ${active.id}` : `${session.study.artifactPath} (no study database yet)`,
  };
}

/** The scores of an `kloop eval`: each partition evaluated, and all of them combined. */
interface EvalScores {
  artifactLabel: string;
  fingerprint: string;
  names: PartitionName[];
  byPartition: Partial<Record<PartitionName, PartitionScore>>;
  all: PartitionScore;
}

/**
 * Evaluates the artifact on the partitions asked for.
 *
 * @throws InputError the partitions hold no example; the scorer failed on an output (code `custom_scorer`)
 */
async function scorePartitions(
  session: StudySession,
  artifactText: string,
  artifactLabel: string,
  options: EvalOptions,
): Promise<EvalScores> {
  const study = session.study;
  // A read-only notebook (a read-only study) neither gives nor takes stored evaluations: this one is evaluated afresh.
  const evaluator = createStudyEvaluator(study, session.writable ? openNotebook(session.db) : undefined);
  const names = options.partition !== undefined ? [options.partition as PartitionName] : [...PARTITIONS];
  if (names.every((name) => study.partitions[name].length === 0)) {
    throw new InputError(
      `the ${names.length === 1 ? `${names[0]} partition holds` : 'corpus holds'} no examples: nothing to evaluate`,
      {
        file: study.config?.configPath ?? study.dir,
        field: options.partition !== undefined ? '--partition' : 'corpus',
      },
    );
  }
  const byPartition: Partial<Record<PartitionName, PartitionScore>> = {};
  for (const name of names) {
    byPartition[name] = await evaluator.evaluate({
      artifactText,
      partition: name,
      examples: study.partitions[name],
      repeats: study.gate.repeats,
      // --no-cache: a fresh evaluation (no stored result, no cached model answer); its results replace the stored ones.
      fresh: options.cache === false,
    });
  }
  const all = names.length === 1 ? byPartition[names[0]!]! : combine(names.map((name) => byPartition[name]!));
  // A scorer that fails on an output is a bug to fix, not a score: exit 2, naming the first (what it scored before is stored).
  const scorerFailed = scorerErrors([all]);
  if (scorerFailed.length > 0) {
    throw new InputError(
      `the scorer failed on ${scorerFailed.length} of the ${all.total} outputs of ${artifactLabel}; first: ${scorerFailed[0]}`,
      { code: 'custom_scorer' },
    );
  }
  return { artifactLabel, fingerprint: evaluator.fingerprint, names, byPartition, all };
}

/** The `--json` object of `kloop eval` (the text report reads it too). */
function evalPayload(
  study: StudySession['study'],
  { artifactLabel, fingerprint, names, byPartition, all }: EvalScores,
) {
  const examplesById = new Map<string, Example>(study.corpus.map((example) => [example.id, example]));
  // With repeats: the examples whose outcome varies across them (src/evaluator/flaky-examples.ts).
  const flaky = findFlakyExamples(all.examples);
  const flakyIds = new Set(flaky.ids);
  return {
    study: study.dir,
    artifact: artifactLabel,
    fingerprint,
    partition: names.length === 1 ? names[0] : 'all',
    task: {
      id: study.task.id,
      components: [...scoreNamesOf(study.task).components],
      metrics: [...scoreNamesOf(study.task).metrics],
    },
    headline: {
      ...(study.headline ?? { name: 'composite', complement: false }),
      value: headlineValue(study.headline, all.composite),
    },
    composite: all.composite,
    components: all.components,
    metrics: all.metrics,
    invalid: all.invalid,
    // Examples with no weighted component scored: left out of the composite (a missing score, not 0).
    unscored: all.unscored ?? [],
    total: all.total,
    partitions: Object.fromEntries(
      names.map((name) => [
        name,
        {
          composite: byPartition[name]!.composite,
          headline: headlineValue(study.headline, byPartition[name]!.composite),
          components: byPartition[name]!.components,
          invalid: byPartition[name]!.invalid,
          unscored: byPartition[name]!.unscored ?? [],
          examples: distinctExamples(byPartition[name]!),
          exampleRepeats: byPartition[name]!.total,
          flaky: findFlakyExamples(byPartition[name]!.examples).count,
        },
      ]),
    ),
    repeats: all.repeats,
    flaky,
    examples: all.examples.map((record) => ({
      ...describeExample(record, examplesById.get(record.exampleId)),
      flaky: flakyIds.has(record.exampleId),
    })),
  };
}

/** `kloop eval`'s summary: the table of partitions, the metrics, the flaky and unscored examples. */
function printEvalSummary(
  study: StudySession['study'],
  { artifactLabel, fingerprint, names, byPartition, all }: EvalScores,
  payload: ReturnType<typeof evalPayload>,
): void {
  print(`${artifactLabel} on ${payload.partition} (evaluator ${fingerprint})`);
  const headline = study.headline ?? { name: 'composite', complement: false };
  const columns = componentColumns(
    scoreNamesOf(study.task).components,
    names.map((name) => byPartition[name]!),
  );
  // Examples, not example-repeats (with 5 repeats, 10 anchors are 10, as the run report says); invalid counts example-repeats.
  const row = (label: string, score: PartitionScore): string[] => [
    label,
    String(distinctExamples(score)),
    formatScore(headlineValue(headline, score.composite)),
    ...columns.map((name) => formatScore(score.components[name])),
    String(score.invalid),
  ];
  const rows = [
    [
      'partition',
      'examples',
      headline.name,
      ...columns,
      all.repeats > 1 ? `invalid (of ${all.repeats} repeats each)` : 'invalid',
    ],
    ...names.map((name) => row(name, byPartition[name]!)),
  ];
  if (names.length > 1) rows.push(row('all', all));
  print(table(rows));
  if (headline.complement)
    print(`${headline.name} = 1 − ${columns.length === 1 ? columns[0] : 'composite'} (lower is better)`);
  const metrics = metricsLine(all.metrics);
  if (metrics !== '') print(metrics);
  const flakyLine = describeFlakyExamples(payload.flaky);
  if (flakyLine !== null) print(flakyLine);
  if (payload.unscored.length > 0) print(describeUnscored(payload.unscored));
}

/** `kloop eval`'s line per example (per repeat, with repeats): its composite and notes, or why it is invalid. */
function printEvalExamples(payload: ReturnType<typeof evalPayload>, repeats: number): void {
  for (const example of payload.examples) {
    // With repeats, each line says which repeat it is, and a flaky example says so.
    const label =
      repeats > 1
        ? `${example.id} (repeat ${example.repeat + 1} of ${repeats}${example.flaky ? ', FLAKY' : ''})`
        : example.id;
    if (!example.valid) {
      print(
        example.invalidReason === UNSCORED_REASON
          ? `${label}  —  ${example.message}`
          : `${label}  INVALID (${example.invalidReason}): ${example.message}`,
      );
      continue;
    }
    const notes = example.notes.length > 0 ? `  ${example.notes.join('; ')}` : '';
    print(
      `${label}  ${formatScore(example.composite)}${example.skipped.length > 0 ? ` (skipped: ${example.skipped.join(', ')})` : ''}${notes}`,
    );
  }
}

function combine(scores: PartitionScore[]): PartitionScore {
  const repeats = Math.max(...scores.map((score) => score.repeats));
  const results = Array.from({ length: repeats }, (_, repeat) => ({
    records: scores.flatMap((score) =>
      score.examples.filter((record) => record.repeat === repeat || score.repeats === 1),
    ),
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    latencyMs: 0,
  }));
  const components = [...new Set(scores.flatMap((score) => Object.keys(score.components)))];
  const metrics = [...new Set(scores.flatMap((score) => Object.keys(score.metrics)))];
  return aggregate('all', scores[0]!.artifactHash, scores[0]!.fingerprint, results, { components, metrics });
}

/** The per-example JSON shape of `kloop eval --json`. */
function describeExample(record: ExampleScoreRecord, example: Example | undefined) {
  if (!record.valid) {
    return {
      id: record.exampleId,
      repeat: record.repeat,
      partition: example?.partition,
      valid: false as const,
      composite: null,
      invalidReason: record.invalidReason,
      message: record.message,
      raw: record.raw ?? null,
    };
  }
  // The task's feedback, one note per problem it names (`; `-separated, as the built-in tasks write it).
  const notes = record.feedback === '' ? [] : record.feedback.replace(/\.$/, '').split('; ');
  return {
    id: record.exampleId,
    repeat: record.repeat,
    partition: example?.partition,
    valid: true as const,
    composite: record.composite,
    components: record.components,
    skipped: record.skipped,
    metrics: record.metrics,
    diagnostics: record.diagnostics,
    feedback: record.feedback,
    notes,
  };
}

/** Distinct examples of a score (its records are example-repeats). */
function distinctExamples(score: PartitionScore): number {
  return new Set(score.examples.map((record) => record.exampleId)).size;
}
