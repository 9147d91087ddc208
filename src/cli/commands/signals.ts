/**
 * `kloop signals ingest|report|mine <study>`: production signals (Loop D)
 * and pattern mining (Loop C). Argument parsing and output only; the work is
 * in `src/signals/`. See docs/loops-c-d.md.
 *
 * Exit codes: 0 done; 2 bad input (including an ingest with refused lines:
 * the valid lines are stored all the same, and ingesting the fixed file again
 * stores only what is new).
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { asIntentExamples } from '../../corpus/intent-example.ts';
import { requireIntentStudy } from '../../study/compose.ts';
import { formatLocation, InputError } from '../../errors.ts';
import { loadStudyPatternLibrary } from '../../runtime/runtime.ts';
import { ingestSignalFile } from '../../signals/ingest.ts';
import type { SlowLoopOptions } from '../../signals/loops.ts';
import { buildMiningReport, runLoopC, runLoopD } from '../../signals/loops.ts';
import type { MiningReport } from '../../signals/mining.ts';
import { signalJsonSchema } from '../../signals/signal.ts';
import type { SignalReport } from '../../signals/signal-report.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../../config/signals-config.ts';
import type { StudyDatabase } from '../../storage/study-database.ts';
import { databaseExists, openDatabase, studyDatabaseLocation, studyDatabasePath } from '../../storage/database.ts';
import { createNotebookFolder } from '../../storage/notebook-folder.ts';
import { isPostgresUrl } from '../../storage/location.ts';
import { isStudyWritable } from './study-session.ts';
import { getRegistryVersion } from '../../storage/registry.ts';
import type { StudyConfig } from '../../config/config.ts';
import { loadStudyConfig } from '../../config/config.ts';
import { loadCorpus, readTextFile } from '../../study/load-study.ts';
import { formatScore, print, printJson, table } from '../output.ts';
import { truncateText } from '../../text/characters.ts';

/**
 * Opens a study's database for the signal commands. Writable opens create it
 * (with the `.kloop/.gitignore`); without `writable`, a study without a
 * database gets an empty in-memory one (nothing is created).
 */
export async function openSignalDatabase(config: StudyConfig, writable: boolean): Promise<StudyDatabase> {
  const location = studyDatabaseLocation(config.dir);
  if (isPostgresUrl(location))
    return writable || (await databaseExists(location)) ? openDatabase(location) : openDatabase(':memory:');
  const file = studyDatabasePath(config.dir);
  // An existing database is opened writable so that it is migrated (an older one may lack the signals table).
  if (!writable && !existsSync(file)) return openDatabase(':memory:');
  // A study this process may not write (a read-only study) is read as it is, unmigrated.
  if (!writable && !isStudyWritable(config.dir)) return openDatabase(file, { readonly: true });
  createNotebookFolder(file);
  return openDatabase(file);
}

/** Parses `--now`: an ISO 8601 date-time. */
export function parseNow(value: string | undefined): Date {
  if (value === undefined) return new Date();
  const instant = Date.parse(value);
  if (Number.isNaN(instant))
    throw new InputError(`expected an ISO 8601 date-time such as 2025-03-10T00:00:00Z, got "${value}"`, {
      field: '--now',
    });
  return new Date(instant);
}

/** What the slow loops read for a study: settings, library, corpus (optimization + anchor) and the active artifact. */
export async function slowLoopInputs(
  config: StudyConfig,
  db: StudyDatabase,
  now: Date,
): Promise<Omit<SlowLoopOptions, 'enqueue'>> {
  requireIntentStudy(config, 'Loops C and D (kloop signals)');
  const corpus = asIntentExamples(loadCorpus(config).filter((example) => example.partition !== 'shadow'));
  const active = await getRegistryVersion(db);
  return {
    db,
    settings: config.signals ?? DEFAULT_SIGNALS_CONFIG,
    patterns: loadStudyPatternLibrary(config.dir).patterns,
    corpus,
    artifactText: active?.text ?? readTextFile(config.artifact, 'the artifact file'),
    now: () => now,
  };
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

function names(list: ReadonlyArray<{ name: string; count: number }>): string {
  return list.length === 0 ? '—' : list.map((entry) => `${entry.name} (${entry.count})`).join(', ');
}

function printSignalReport(report: SignalReport): void {
  print(`signals ${report.window.from} → ${report.window.to} (${report.window.days} days)`);
  print(
    `${report.signals} signals: direct ${report.methods.direct}, decomposed ${report.methods.decomposed}, partial ${report.methods.partial}; ` +
      `low confidence ${report.lowConfidence} (method ${report.settings.lowConfidenceMethods.join('/')} or confidence < ${report.settings.confidenceThreshold})`,
  );
  print();
  if (report.clusters.length === 0)
    print(`no cluster of at least ${report.settings.minClusterSize} low-confidence signals`);
  else {
    print(
      table([
        [
          'app class',
          'commitments',
          'entities',
          'size',
          'share',
          'mean conf.',
          'uncovered entities',
          'uncovered behaviours',
        ],
        ...report.clusters.map((cluster) => [
          cluster.appClass,
          cluster.hasCommitments ? 'yes' : 'no',
          cluster.entityCountBucket,
          String(cluster.size),
          percent(cluster.share),
          formatScore(cluster.meanConfidence),
          names(cluster.uncoveredEntities),
          names(cluster.uncoveredBehaviors),
        ]),
      ]),
    );
  }
  print(
    `below the minimum size (${report.settings.minClusterSize}): ${report.belowMinimum.clusters} shapes, ${report.belowMinimum.signals} signals`,
  );
  for (const cluster of report.clusters.filter((entry) => entry.exampleGoals.length > 0)) {
    print(
      `  ${cluster.key}: e.g. ${cluster.exampleGoals.map((goal) => JSON.stringify(truncateText(goal, 120, '...'))).join('; ')}`,
    );
  }
  print();
  print(
    `recurring gaps: ${report.recurringGaps.length === 0 ? 'none' : report.recurringGaps.map((gap) => `${gap.kind} ${gap.name} (${gap.count})`).join(', ')}`,
  );
  const deprecation = report.deprecationCandidates;
  print(
    `deprecation candidates: patterns ${deprecation.patterns.length === 0 ? 'none' : deprecation.patterns.join(', ')}; sections ${deprecation.sections.length === 0 ? 'none' : deprecation.sections.join(', ')}`,
  );
  for (const note of deprecation.notes) print(`  (${note})`);
  print(
    `candidate patterns: ${report.candidatePatterns.length === 0 ? 'none' : report.candidatePatterns.map((candidate) => `${candidate.draft?.id ?? '(no draft)'} for ${candidate.clusterKey}${candidate.draft !== null && !candidate.draft.valid ? ' [invalid draft]' : ''}`).join(', ')}`,
  );
}

function printMiningReport(report: MiningReport): void {
  print(
    `shapes mined from ${report.signalsConsidered} signals (${report.signalsWithoutShape} without roles/behaviours) and ${report.corpusConsidered} corpus examples (${report.corpusWithoutShape} without a shape)`,
  );
  if (report.shapes.length === 0)
    print(`no frequent shape (≥ ${report.settings.minSupport}) is missing from the library or thin in the corpus`);
  else {
    print(
      table([
        ['shape', 'signals', 'corpus', 'library', 'reasons'],
        ...report.shapes.map((shape) => [
          shape.key,
          String(shape.signals),
          String(shape.corpusExamples),
          `${shape.library.status}${shape.library.bestPattern !== null && shape.library.status !== 'covered' ? ` (best ${shape.library.bestPattern})` : ''}`,
          shape.reasons.join(', '),
        ]),
      ]),
    );
  }
  print(
    `candidate patterns: ${report.candidatePatterns.length === 0 ? 'none' : report.candidatePatterns.map((candidate) => candidate.draft.id).join(', ')}`,
  );
  print(`candidate examples: ${report.candidateExamples.length}`);
}

function printEnqueued(
  enqueued: { queued: number; alreadyQueued: number; admitted: number; skipped: unknown[] } | null,
): void {
  if (enqueued === null) return;
  print(
    `review queue: ${enqueued.queued} new items, ${enqueued.alreadyQueued} already queued, ${enqueued.admitted} admitted, ${enqueued.skipped.length} skipped`,
  );
}

export function registerSignalsCommands(program: Command): void {
  const signals = program
    .command('signals')
    .description(
      'Production signals (Loop D) and pattern mining (Loop C): ingest, report, mine. See docs/loops-c-d.md.',
    );

  signals
    .command('schema')
    .description('Print the JSON Schema of a signal (what ingest and the endpoint accept).')
    .option('--json', 'print one JSON object on stdout (the schema is always printed as JSON)')
    .action(() => {
      printJson(signalJsonSchema());
    });

  signals
    .command('ingest')
    .description(
      'Store the signals of a JSON Lines file (one signal per line; malformed lines refused with line and field; idempotent by id).',
    )
    .argument('<study>', 'study folder')
    .argument('<file>', 'JSON Lines file of signals')
    .option('--json', 'print one JSON object on stdout')
    .action(signalsIngestCommand);

  signals
    .command('report')
    .description(
      'Loop D: clusters of low-confidence assemblies by shape over the rolling window, recurring gaps, deprecation and pattern candidates.',
    )
    .argument('<study>', 'study folder')
    .option('--json', 'print one JSON object on stdout')
    .option('--now <iso>', 'end of the window (ISO 8601); default now')
    .option('--enqueue', 'send the candidate patterns to the review queue (never to the active artifact)')
    .action(async (studyDir: string, options: { json?: boolean; now?: string; enqueue?: boolean }) => {
      const now = parseNow(options.now);
      const config = loadStudyConfig(studyDir);
      const db = await openSignalDatabase(config, options.enqueue === true);
      try {
        const { report, enqueued } = await runLoopD({
          ...(await slowLoopInputs(config, db, now)),
          enqueue: options.enqueue === true,
        });
        if (options.json === true) printJson(enqueued === null ? report : { ...report, enqueued });
        else {
          printSignalReport(report);
          printEnqueued(enqueued);
        }
      } finally {
        await db.destroy();
      }
    });

  signals
    .command('mine')
    .description(
      'Loop C: recurring app shapes (type × roles × behaviours) frequent in signals or the corpus but missing or thin in the corpus and the pattern library.',
    )
    .argument('<study>', 'study folder')
    .option('--json', 'print one JSON object on stdout')
    .option('--now <iso>', 'end of the signal window (ISO 8601); default now')
    .option(
      '--enqueue',
      'send candidate patterns and examples to the review queue (examples for admission after review)',
    )
    .action(signalsMineCommand);
}

/** `kloop signals ingest`'s action: stores the valid lines of a JSONL file of production signals. */
async function signalsIngestCommand(studyDir: string, file: string, options: { json?: boolean }): Promise<void> {
  const config = loadStudyConfig(studyDir);
  if (!existsSync(file)) throw new InputError('file not found', { file });
  const db = await openSignalDatabase(config, true);
  try {
    const report = await ingestSignalFile(db, file, {
      storeGoals: (config.signals ?? DEFAULT_SIGNALS_CONFIG).storeGoals,
    });
    if (options.json === true) printJson(report);
    else {
      print(
        `${file}: ${report.records} records, ${report.valid} valid, ${report.stored} stored, ${report.duplicates} duplicates, ${report.malformed} malformed`,
      );
      for (const issue of report.issues.slice(0, 20))
        print(
          `  ${formatLocation(issue.message, { file, ...(issue.line !== undefined ? { line: issue.line } : {}), ...(issue.field !== undefined ? { field: issue.field } : {}) })}`,
        );
      if (report.issues.length + report.issuesOmitted > 20)
        print(`  ... and ${report.issues.length + report.issuesOmitted - 20} more problems (use --json)`);
    }
    process.exitCode = report.malformed > 0 ? 2 : 0;
  } finally {
    await db.destroy();
  }
}

/** `kloop signals mine`'s action: Loop C, pattern mining over the notebook's failures and signals. */
async function signalsMineCommand(
  studyDir: string,
  options: { json?: boolean; now?: string; enqueue?: boolean },
): Promise<void> {
  const now = parseNow(options.now);
  const config = loadStudyConfig(studyDir);
  const db = await openSignalDatabase(config, options.enqueue === true);
  try {
    const inputs = await slowLoopInputs(config, db, now);
    const result =
      options.enqueue === true
        ? await runLoopC({ ...inputs, enqueue: true })
        : { report: await buildMiningReport(inputs), enqueued: null };
    if (options.json === true)
      printJson(result.enqueued === null ? result.report : { ...result.report, enqueued: result.enqueued });
    else {
      printMiningReport(result.report);
      printEnqueued(result.enqueued);
    }
  } finally {
    await db.destroy();
  }
}
