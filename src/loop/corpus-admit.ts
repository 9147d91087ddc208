/**
 * `kloop corpus add`: admission of a batch of records into a study, checked
 * and recorded with the lifecycle (DESIGN §3, §4).
 *
 * @module
 */
import { memberLocations } from '../corpus/file-admission.ts';
import type { AdmissionOptions, AdmissionVerdict, CandidateRecord } from '../corpus/admission.ts';
import { resolveCorpus } from '../corpus/lifecycle.ts';
import type { CorpusDatabase } from '../corpus/lifecycle-store.ts';
import { lastExperimentId, readCorpusMembers, writeMembers, writeMoves } from '../corpus/lifecycle-store.ts';
import { InputError } from '../errors.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { readStudyState } from './study-state.ts';
import { planFileSync } from './corpus-sync.ts';

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
 * every record is checked (`checkAdmission`), admitted examples enter shadow
 * and every verdict is recorded (`admitted` / `refused` events), all in one
 * transaction.
 *
 * @throws InputError while a round is open (a run in progress, or one that
 *   stopped mid-round: finish it with `kloop run` first)
 */
export async function admitToStudy(
  db: CorpusDatabase,
  study: LoadedStudy,
  records: readonly CandidateRecord[],
  options: AdmissionOptions & { source: string; dryRun?: boolean; now?: () => Date },
): Promise<AdmissionOutcome> {
  const state = await readStudyState(db);
  if (state.openRound !== undefined && state.openRound !== null) {
    throw new InputError(
      `round ${state.openRound.round} of this study is open (a run is in progress, or stopped mid-round): admit examples between runs`,
      { studyPath: study.dir },
    );
  }
  const now = options.now ?? (() => new Date());
  // Loaded here, not with this module: admission's grounding check imports the NLP library (about 0.3 s), which a run never needs.
  const { checkAdmission } = await import('../corpus/admission.ts');
  return db.transaction().execute(async (transaction) => {
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
    const verdicts = checkAdmission(records, resolved.corpus, taken, {
      ...options,
      format,
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
      admitted.map((verdict) => ({
        exampleId: verdict.example!.id,
        origin: 'admitted',
        source: options.source,
        example: verdict.example!,
        partition: 'shadow',
        shadowExposures: 0,
        shadowSince: at,
        admittedAt: at,
        updatedAt: at,
      })),
    );
    await writeMoves(
      transaction,
      verdicts.map((verdict) =>
        verdict.admitted
          ? {
              exampleId: verdict.id ?? null,
              kind: 'admitted',
              from: null,
              to: 'shadow',
              reason: `admitted from ${options.source}: passed every admission check; shadow first`,
              details: { source: options.source, line: verdict.line, notes: verdict.notes },
            }
          : {
              exampleId: verdict.id ?? null,
              kind: 'refused',
              from: null,
              to: null,
              reason: verdict.reasons.map((reason) => `${reason.check}: ${reason.message}`).join('; '),
              details: { source: options.source, line: verdict.line, reasons: verdict.reasons },
            },
      ),
      experimentId,
      at,
    );
    return outcome;
  });
}
