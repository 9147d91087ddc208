/**
 * `kloop doctor`'s check that every candidate a round proposed was decided
 * (fault 10 of issue 36: a resumed round that dropped a candidate left a
 * notebook unlike an uninterrupted run's, and the doctor said healthy).
 *
 * Each proposer call records the identities of its candidates
 * (`proposals.candidate_ids`, src/loop/candidate-id.ts) and each experiment
 * the identity it decided (`experiments.candidate_id`). A candidate with no
 * experiment is
 *
 * - expected in the round that is still open (`study_state.openRound`): the
 *   next run decides it (`info`);
 * - expected in a round whose run stopped on its experiment budget
 *   (`max_experiments`) right after it: the budget left it undecided (`info`);
 * - a problem anywhere else: a closed round lost it.
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { MIGRATIONS } from '../storage/migrations.ts';
import {
  hasAppliedMigration,
  readDecidedCandidateIds,
  readLastStopReasonOfRound,
  readProposedCandidateIds,
} from '../storage/notebook/doctor-queries.ts';
import { readStudyState } from '../loop/study-state.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/** One finding, as `kloop doctor` reports it (src/doctor/doctor.ts). */
export interface UndecidedFinding {
  id: 'database.undecided-candidates';
  status: 'ok' | 'problem' | 'info';
  message: string;
  fix?: string;
}

/** The migration that added the identities: older notebooks cannot be checked. */
const IDENTITIES_MIGRATION = '0009_candidate_ids_and_lease_generation';

/** Candidates proposed and never decided, by round: what the check reads. */
export async function undecidedCandidates(db: StudyDatabase): Promise<Map<number, string[]>> {
  const proposals = await readProposedCandidateIds(db);
  const decided = await readDecidedCandidateIds(db);
  const undecided = new Map<number, string[]>();
  for (const proposal of proposals) {
    const missing = (JSON.parse(proposal.candidateIds) as string[]).filter((id) => !decided.has(id));
    if (missing.length > 0) undecided.set(proposal.round, [...(undecided.get(proposal.round) ?? []), ...missing]);
  }
  return undecided;
}

/** True when the notebook has candidate identities (migration 0009 applied; a read-only open does not migrate). */
export async function hasCandidateIdentities(db: StudyDatabase): Promise<boolean> {
  if (!(IDENTITIES_MIGRATION in MIGRATIONS)) throw new Error(`unknown migration ${IDENTITIES_MIGRATION}`);
  return hasAppliedMigration(db, IDENTITIES_MIGRATION);
}

/** The findings of the check (a problem for a closed round's lost candidates, info for those the open round or the budget left). */
export async function undecidedCandidateFindings(db: StudyDatabase): Promise<UndecidedFinding[]> {
  if (!(await hasCandidateIdentities(db))) {
    return [
      {
        id: 'database.undecided-candidates',
        status: 'info',
        message:
          'the notebook predates candidate identities (migration 0009): whether every proposed candidate was decided is not checked',
      },
    ];
  }
  const undecided = await undecidedCandidates(db);
  const openRound = (await readStudyState(openNotebook(db))).openRound?.round ?? null;
  const lost: string[] = [];
  const findings: UndecidedFinding[] = [];
  for (const [round, ids] of undecided) {
    const line = `round ${round}: ${ids.join(', ')}`;
    if (round === openRound)
      findings.push({
        id: 'database.undecided-candidates',
        status: 'info',
        message: `round ${round} is open with ${ids.length} candidate(s) not decided yet (${ids.join(', ')}): the next run decides them`,
      });
    else if (await budgetEndedAfter(db, round))
      findings.push({
        id: 'database.undecided-candidates',
        status: 'info',
        message: `${line} were not decided: the experiment budget (stopping.maxExperiments) ran out in that round`,
      });
    else lost.push(line);
  }
  if (lost.length > 0) {
    findings.unshift({
      id: 'database.undecided-candidates',
      status: 'problem',
      message: `candidates proposed in a closed round were never decided (${lost.join('; ')}): the notebook differs from an uninterrupted run's`,
      fix: 'a resumed round skipped them (a kloop release that found decisions by delta text): rerun the study from a backup taken before that round, or keep the notebook knowing those candidates were never judged',
    });
  }
  if (findings.length === 0)
    findings.push({
      id: 'database.undecided-candidates',
      status: 'ok',
      message: 'every candidate a closed round proposed was decided',
    });
  return findings;
}

/** True when the run that last decided in `round` stopped on its experiment budget: the budget left the round's other candidates undecided. */
async function budgetEndedAfter(db: StudyDatabase, round: number): Promise<boolean> {
  return (await readLastStopReasonOfRound(db, round)) === 'max_experiments';
}
