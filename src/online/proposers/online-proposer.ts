/**
 * The proposer of an online study, from `proposer.kind` in kloop.yaml:
 * `ideas` (the offline stand-in, src/online/proposers/ideas-proposer.ts).
 */
import type { StudyDatabase } from '../../storage/database.ts';
import type { OnlineStudyConfig } from '../config.ts';
import { createIdeasProposer, type OnlineProposer } from './ideas-proposer.ts';

/** Builds the study's online proposer. */
export async function createOnlineProposer(config: OnlineStudyConfig, _context: { db: StudyDatabase }): Promise<OnlineProposer> {
  return createIdeasProposer();
}
