/**
 * Ingesting a JSON Lines file of signals (`kloop signals ingest`): each line
 * one signal object (schema in `signal.ts`), blank lines skipped.
 *
 * - A malformed line (invalid JSON, a missing or wrong field, an unknown
 *   field) is refused with its line number and field, and counted; the valid
 *   lines are stored.
 * - Idempotent by signal id: a signal already stored, or repeated in the
 *   file, is counted as a duplicate and stored once (the first one wins), so
 *   the same file can be ingested again after fixing its bad lines.
 * - The file is read as a stream in batches (memory stays bounded) and must
 *   be UTF-8; invalid UTF-8 is an {@link InputError} naming the line.
 */
import { createReadStream } from 'node:fs';
import { InputError } from '../errors.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { Signal, SignalIssue, SignalSource } from './signal.ts';
import { parseSignalLine } from './parse-signals.ts';
import { storeSignals } from './signal-store.ts';

/** Options of {@link ingestSignalFile}. */
export interface IngestOptions {
  /** Store goal texts. Default true (`signals.storeGoals`). */
  storeGoals?: boolean;
  /** Source recorded with each row. Default 'ingest'. */
  source?: SignalSource;
  now?: () => Date;
  /** Valid signals stored per transaction. Default 1 000. */
  batchSize?: number;
  /** Most issues kept in the report (the count is always exact). Default 1 000. */
  maxIssues?: number;
}

/** What an ingest did (JSON-ready; the CLI prints it with `--json`). */
export interface IngestReport {
  file: string;
  /** Non-blank lines read. */
  records: number;
  /** Lines that validated. */
  valid: number;
  /** Signals newly stored. */
  stored: number;
  /** Valid signals whose id was already stored or repeated in the file (stored once). */
  duplicates: number;
  /** Lines refused. */
  malformed: number;
  /** Problems of refused lines, with line and field (at most `maxIssues`). */
  issues: SignalIssue[];
  /** Issues left out of `issues`. */
  issuesOmitted: number;
}

/** Reads a UTF-8 file line by line (1-based numbers), strictly decoding UTF-8. */
export async function* readUtf8Lines(file: string): AsyncGenerator<{ line: string; number: number }> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending = '';
  let number = 0;
  let stream: AsyncIterable<Buffer>;
  try {
    stream = createReadStream(file);
  } catch (error) {
    throw new InputError(`cannot read: ${(error as Error).message}`, { file });
  }
  try {
    for await (const chunk of stream) {
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw new InputError('the file is not valid UTF-8', {
          file,
          line: number + 1 + (pending.match(/\n/g)?.length ?? 0),
        });
      }
      pending += text;
      let newline = pending.indexOf('\n');
      while (newline !== -1) {
        number += 1;
        yield { line: pending.slice(0, newline).replace(/\r$/, ''), number };
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
    }
    try {
      pending += decoder.decode();
    } catch {
      throw new InputError('the file is not valid UTF-8', { file, line: number + 1 });
    }
  } catch (error) {
    if (InputError.isInstance(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? 'file not found' : `cannot read: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
  if (pending !== '') {
    number += 1;
    yield { line: pending.replace(/\r$/, ''), number };
  }
}

/**
 * Ingests a JSON Lines file of signals into the study database.
 *
 * @throws InputError when the file cannot be read or is not UTF-8 (nothing
 *   after the bad line is stored; earlier batches are, idempotently)
 */
export async function ingestSignalFile(
  db: StudyDatabase,
  file: string,
  options: IngestOptions = {},
): Promise<IngestReport> {
  const batchSize = options.batchSize ?? 1_000;
  const maxIssues = options.maxIssues ?? 1_000;
  const report: IngestReport = {
    file,
    records: 0,
    valid: 0,
    stored: 0,
    duplicates: 0,
    malformed: 0,
    issues: [],
    issuesOmitted: 0,
  };
  let batch: Signal[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const result = await storeSignals(db, batch, {
      source: options.source ?? 'ingest',
      ...(options.storeGoals !== undefined ? { storeGoals: options.storeGoals } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
    });
    report.stored += result.stored;
    report.duplicates += result.duplicates;
    batch = [];
  };
  for await (const { line, number } of readUtf8Lines(file)) {
    const parsed = parseSignalLine(line, number, report.records);
    if (parsed === undefined) continue;
    report.records += 1;
    if (parsed.ok) {
      report.valid += 1;
      batch.push(parsed.signal.signal);
      if (batch.length >= batchSize) await flush();
      continue;
    }
    report.malformed += 1;
    for (const issue of parsed.issues) {
      if (report.issues.length < maxIssues) report.issues.push(issue);
      else report.issuesOmitted += 1;
    }
  }
  await flush();
  return report;
}
