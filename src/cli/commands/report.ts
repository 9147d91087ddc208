/**
 * `kloop report <study> --format html|csv|json [--out FILE]`: a report to
 * share. HTML is one self-contained file with the viewer's charts (Chart.js
 * inlined; it opens offline), CSV has one row per experiment, JSON carries
 * everything. Files are written through a temporary name and a rename.
 */
import { isIntentStudy } from '../../study/compose.ts';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { databaseExists, openDatabase, studyDatabaseLocation } from '../../storage/database.ts';
import { headlineOfConfig, loadConfigOrNotebook } from './study-session.ts';
import { writeFileAtomicSync } from '../../report/export.ts';
import { print, printJson, progress } from '../output.ts';

const FORMATS = ['html', 'csv', 'json'] as const;

interface ReportOptions {
  format: string;
  out?: string;
  quiet?: boolean;
}

export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description(
      'Write a report of a study to share: html (one self-contained file with the charts, opens offline), csv (one row per experiment) or json (everything). ' +
        'Without --out: csv and json go to stdout; html too when stdout is not a terminal, else to <study>/.kloop/report.html.',
    )
    .argument('<study>', 'study folder')
    .option('--format <format>', `one of ${FORMATS.join(', ')}`, 'html')
    .option('--out <file>', 'write the report to this file ("-" for stdout)')
    .option('--quiet', 'no progress lines on stderr')
    .option(
      '--json',
      'with --out FILE, print one JSON object on stdout ({file, format, experiments, bytes}); with --format json the report itself is JSON',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  kloop report examples/intent --format html --out study.html\n  kloop report examples/intent --format csv > experiments.csv',
    )
    .action(reportCommand);
}

/** `kloop report`'s action: writes the study's report to share (html, csv or json). */
async function reportCommand(studyDir: string, options: ReportOptions): Promise<void> {
  const format = options.format.toLowerCase();
  if (!(FORMATS as readonly string[]).includes(format))
    throw new InputError(`unknown format "${options.format}"; expected ${FORMATS.join(', ')}`, {
      field: '--format',
    });
  const json = (options as { json?: boolean }).json === true;
  if (json && format !== 'json' && (options.out === undefined || options.out === '-')) {
    // --json promises one JSON object on stdout: an html or csv report there would break it.
    throw new InputError(
      `--json with --format ${format} needs --out FILE (the report goes to the file, the JSON summary to stdout); or use --format json`,
      { field: '--json' },
    );
  }
  const { dir, config } = await loadConfigOrNotebook(studyDir);
  const file = studyDatabaseLocation(dir);
  if (!(await databaseExists(file)))
    throw new InputError('this study has no database yet: run `kloop run` first', { file });
  const out =
    options.out ?? (format === 'html' && process.stdout.isTTY === true ? path.join(dir, '.kloop', 'report.html') : '-');
  if (out !== '-' && !existsSync(path.dirname(path.resolve(out))))
    throw new InputError('the folder of the output file does not exist', { file: out, field: '--out' });
  const { loadReportData, renderCsvReport, renderHtmlReport, renderJsonReport } = await import(
    '../../view/study-report.ts'
  );
  const { runLoopD } = await import('../../signals/loops.ts');
  const { slowLoopInputs } = await import('./signals.ts');
  const db = await openDatabase(file, { readonly: true });
  try {
    const data = await loadReportData(db, {
      studyDir: dir,
      headline: headlineOfConfig(config),
      ...(config !== null
        ? {
            corpusPolicy: {
              graduateAfterDecisions: config.corpusPolicy.graduateAfterDecisions,
              maxShadowExposures: config.corpusPolicy.maxShadowExposures,
              rotateSlice: config.corpusPolicy.rotateSlice,
            },
          }
        : {}),
      // Loop D reads intents: the signals of other tasks' studies are not available.
      ...(config !== null && isIntentStudy(config)
        ? {
            loadSignals: async () =>
              (await runLoopD({ ...(await slowLoopInputs(config, db, new Date())), enqueue: false })).report,
          }
        : {}),
    });
    const text =
      format === 'html' ? renderHtmlReport(data) : format === 'csv' ? renderCsvReport(data) : renderJsonReport(data);
    if (out === '-') {
      process.stdout.write(text);
      return;
    }
    writeFileAtomicSync(path.resolve(out), text);
    progress(
      `kloop: ${format} report of ${dir}: ${data.experiments.length} experiments, ${(Buffer.byteLength(text) / 1024).toFixed(0)} KiB`,
      options.quiet === true,
    );
    if ((options as { json?: boolean }).json === true)
      printJson({
        file: path.resolve(out),
        format,
        experiments: data.experiments.length,
        bytes: Buffer.byteLength(text),
      });
    else print(path.resolve(out));
  } finally {
    await db.destroy();
  }
}
