/**
 * The corpus commands that read the lifecycle: `kloop corpus status` (the
 * partitions, sizes, exposures and what is due) and `kloop corpus at` (the
 * partitions a decision saw).
 */
import { PARTITIONS } from '../../corpus/example.ts';
import { describeLeak } from '../../corpus/file-admission.ts';
import { reconstructPartitions } from '../../corpus/lifecycle.ts';
import { readCorpusEvents, readDecisionRecords } from '../../corpus/lifecycle-store.ts';
import { InputError } from '../../errors.ts';
import { corpusStatus } from '../../loop/corpus-lifecycle.ts';
import type { StudyDatabase } from '../../storage/study-database.ts';
import { print, printJson, table } from '../output.ts';
import { openStudy } from './study-session.ts';
import { openNotebook } from '../../storage/notebook/index.ts';

/** The study opened as the corpus reads want it: no model calls, quiet, writable when it can be, leaks reported. */
function openForCorpusRead(studyDir: string): ReturnType<typeof openStudy> {
  return openStudy(studyDir, { modelCalls: 'none', quiet: true, preferWritable: true, partitionLeaks: 'report' });
}

/** `kloop corpus status <study>`: partitions, sizes, shadow exposures and what is due. */
export async function corpusStatusCommand(studyDir: string, options: { json?: boolean }): Promise<void> {
  const session = await openForCorpusRead(studyDir);
  try {
    const lifecycle = await lifecycleDb(session.db);
    const status = await corpusStatus(lifecycle === undefined ? undefined : openNotebook(lifecycle), session.study);
    if (options.json === true) {
      printJson({ study: session.study.dir, ...status });
      return;
    }
    print(
      `corpus of ${session.study.dir}${status.initialised ? '' : ' (not yet recorded: the partitions the corpus files give; the next run records them)'}`,
    );
    print(
      `sizes: optimization ${status.sizes.optimization}, anchor ${status.sizes.anchor}, shadow ${status.sizes.shadow}${status.sizes.removed > 0 ? `, removed ${status.sizes.removed}` : ''}`,
    );
    print(
      `policy: graduate after ${status.policy.graduateAfterDecisions} shadow decisions${status.policy.graduateAfterRounds !== undefined ? `, ${status.policy.graduateAfterRounds} rounds in shadow` : ''}${status.policy.graduateAfterDays !== undefined ? ` or ${status.policy.graduateAfterDays} days` : ''}, whichever comes first; ${status.policy.rotateSlice} per round boundary; spent at ${status.policy.maxShadowExposures} exposures; shadow never below ${status.minShadowExamples}`,
    );
    print(`shadow exposures: most ${status.shadowExposures.max} of ${status.shadowExposures.limit}`);
    print(`next round boundary: ${describeNext(status.next)}`);
    if (status.pending.length > 0)
      print(
        `the next run admits ${status.pending.length} new record(s) of the corpus files: ${status.pending.map((record) => `${record.id} → ${record.partition}`).join(', ')}`,
      );
    if (status.refused.length > 0) {
      print(`refused by admission, left out of the study (${status.refused.length}):`);
      for (const record of status.refused)
        for (const reason of record.reasons)
          print(
            `  ${record.location} ${record.id}: ${reason.check}${reason.field !== undefined ? ` ${reason.field}` : ''}: ${reason.message}`,
          );
    }
    for (const leak of status.leaks)
      print(
        `LEAK between partitions (kloop run, eval and the other commands that load the study refuse it until this is resolved): ${describeLeak(leak, session.study.exampleFormat.inputField)}`,
      );
    for (const warning of status.warnings) print(`WARNING: ${warning.message}`);
    print();
    print(
      table([
        ['id', 'partition', 'exposures', 'rounds in shadow', 'in shadow since', 'origin', 'due'],
        ...status.members.map((member) => [
          member.id,
          member.partition + (member.promotedBy !== null ? ` (promoted by ${member.promotedBy})` : ''),
          String(member.exposures),
          member.partition === 'shadow' ? String(member.shadowRounds) : '',
          member.shadowSince ?? '—',
          `${member.origin}: ${member.source}`,
          member.due ?? '',
        ]),
      ]),
    );
  } finally {
    await session.close();
  }
}

/** `kloop corpus at <study> <experiment>`: the partitions a decision saw. */
export async function corpusAtCommand(
  studyDir: string,
  experiment: string,
  options: { json?: boolean },
): Promise<void> {
  const id = Number(experiment);
  if (!Number.isInteger(id) || id < 1)
    throw new InputError(`experiment id must be a positive whole number, got "${experiment}"`, {
      field: '<experiment>',
    });
  const session = await openForCorpusRead(studyDir);
  try {
    const db = await lifecycleDb(session.db);
    const decisions = db === undefined ? [] : await readDecisionRecords(openNotebook(db));
    if (!decisions.some((decision) => decision.id === id))
      throw new InputError(`no experiment ${id} in this study`, { field: '<experiment>' });
    const at = reconstructPartitions(await readCorpusEvents(openNotebook(db!)), decisions, id);
    const payload = {
      study: session.study.dir,
      ...at,
      sizes: Object.fromEntries(PARTITIONS.map((name) => [name, at.partitions[name].length])),
    };
    if (options.json === true) {
      printJson(payload);
      return;
    }
    if (at.beforeLifecycle)
      print(
        `experiment ${id} was decided before this study recorded its corpus lifecycle: the partitions were those of the corpus files then, which kloop did not record`,
      );
    print(
      `partitions at experiment ${id} (${at.movesBefore} lifecycle events recorded before it): ${PARTITIONS.map((name) => `${name} ${at.partitions[name].length}`).join(', ')}`,
    );
    for (const name of PARTITIONS) {
      print();
      print(`${name}:`);
      for (const member of at.partitions[name])
        print(`  ${member}${name === 'shadow' ? `  (${at.exposures[member] ?? 0} exposures)` : ''}`);
    }
  } finally {
    await session.close();
  }
}

/** The database when it has the lifecycle tables (an old read-only notebook may not). */
async function lifecycleDb(db: StudyDatabase): Promise<StudyDatabase | undefined> {
  const tables = await db.introspection.getTables();
  return tables.some((table) => table.name === 'corpus_members') ? db : undefined;
}

function describeNext(next: { kind: string; ids: string[]; detail: string | null }): string {
  switch (next.kind) {
    case 'graduate':
      return `${next.ids.length} graduate into optimization (${next.ids.join(', ')})${next.detail !== null ? `; ${next.detail}` : ''}`;
    case 'rotate':
      return `rotation: ${next.ids.join(', ')} rotate into optimization`;
    case 'spent':
      return `the run will stop: ${next.detail ?? ''}`;
    default:
      return next.ids.length > 0
        ? `nothing moves; due: ${next.ids.join(', ')}${next.detail !== null ? ` (${next.detail})` : ''}`
        : 'nothing is due';
  }
}
