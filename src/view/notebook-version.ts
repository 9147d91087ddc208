/**
 * The viewer's change fingerprint, so `GET /api/events` can tell the pages
 * to redraw whenever the notebook changed: one cheap query per table the
 * pages show (src/storage/notebook/view-results-queries.ts).
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import { readNotebookVersion } from '../storage/notebook/view-results-queries.ts';

/** A cheap fingerprint of everything the pages show (JSON text): it changes whenever the notebook does (the `change` events of `GET /api/events`). */
export async function notebookVersion(db: StudyDatabase): Promise<string> {
  return readNotebookVersion(db);
}
