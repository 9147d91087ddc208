/**
 * `kloop corpus add`: admission of a batch of records into a study, checked
 * and recorded with the lifecycle (DESIGN §3, §4).
 *
 * @module
 */
import { memberLocations } from '../corpus/file-admission.ts';
import type { AdmissionOptions, AdmissionVerdict, CandidateRecord } from '../corpus/admission-check.ts';
import { checkRecords } from '../corpus/admission-check.ts';
import type { CorpusMember, CorpusMove } from '../corpus/lifecycle.ts';
import { resolveCorpus } from '../corpus/lifecycle.ts';
import { lastExperimentId, readCorpusMembers, writeMembers, writeMoves } from '../corpus/lifecycle-store.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { planFileSync, refuseWhileRoundOpen } from './corpus-sync.ts';
import type { Notebook } from '../storage/notebook/index.ts';

/** The outcome of `kloop corpus add`. */
export interface AdmissionOutcome {
  verdicts: AdmissionVerdict[];
  admitted: number;
  refused: number;
  /** Nothing was written (dry run). */
  dryRun: boolean;
}

/**
 * Admits a batch into the study: the lifecycle is synced with the files,
 * every record is checked (`checkRecords`, with the study's record format or
 * the caller's `options.format`), admitted examples enter shadow
 * and every verdict is recorded (`admitted` / `refused` events), all in one
 * transaction.
 *
 * @throws InputError while a round is open (a run in progress, or one that
 *   stopped mid-round: finish it with `kloop run` first)
 */
export async function admitToStudy(
  notebook: Notebook,
  study: LoadedStudy,
  records: readonly CandidateRecord[],
  options: AdmissionOptions & { source: string; dryRun?: boolean; now?: () => Date },
): Promise<AdmissionOutcome> {
  await refuseWhileRoundOpen(notebook, study, 'admit examples between runs');
  const now = options.now ?? (() => new Date());
  return notebook.transaction(async (transaction) => {
    const at = now().toISOString();
    const sync = planFileSync(study, await readCorpusMembers(transaction), at);
    const files = sync.files;
    const experimentId = await lastExperimentId(transaction);
    const resolved = resolveCorpus(files, sync.members);
    // Every id the study has had, and every id of the corpus files (a refused file record keeps its id).
    const taken = new Set([
      ...sync.members.map((member) => member.exampleId),
      ...(sync.admission?.records ?? []).map((entry) => entry.example.id),
    ]);
    // The study's record format, or the caller's (`kloop corpus add --partial-gold` gives the one that admits partial intent gold).
    const format = options.format ?? study.exampleFormat;
    const verdicts = checkRecords(records, resolved.corpus, taken, format, {
      ...options,
      locations: memberLocations(files, sync.members),
    });
    const admitted = verdicts.filter((verdict) => verdict.admitted);
    const outcome = {
      verdicts,
      admitted: admitted.length,
      refused: verdicts.length - admitted.length,
      dryRun: options.dryRun === true,
    };
    if (options.dryRun === true) return outcome;
    if (sync.changed.length > 0) await writeMembers(transaction, sync.changed);
    if (sync.moves.length > 0) await writeMoves(transaction, sync.moves, experimentId, at);
    await writeMembers(
      transaction,
      admitted.map((verdict) => admittedMember(verdict, options.source, at)),
    );
    await writeMoves(
      transaction,
      verdicts.map((verdict) => verdictMove(verdict, options.source)),
      experimentId,
      at,
    );
    return outcome;
  });
}

/** The member an admitted record becomes at `at`: in shadow, no exposures yet. */
function admittedMember(verdict: AdmissionVerdict, source: string, at: string): CorpusMember {
  return {
    exampleId: verdict.example!.id,
    origin: 'admitted',
    source,
    example: verdict.example!,
    partition: 'shadow',
    shadowExposures: 0,
    shadowSince: at,
    admittedAt: at,
    updatedAt: at,
  };
}

/** The lifecycle event of one verdict: `admitted` into shadow, or `refused` with the checks' reasons. */
function verdictMove(verdict: AdmissionVerdict, source: string): CorpusMove {
  return verdict.admitted
    ? {
        exampleId: verdict.id ?? null,
        kind: 'admitted',
        from: null,
        to: 'shadow',
        reason: `admitted from ${source}: passed every admission check; shadow first`,
        details: { source, line: verdict.line, notes: verdict.notes },
      }
    : {
        exampleId: verdict.id ?? null,
        kind: 'refused',
        from: null,
        to: null,
        reason: verdict.reasons.map((reason) => `${reason.check}: ${reason.message}`).join('; '),
        details: { source, line: verdict.line, reasons: verdict.reasons },
      };
}
