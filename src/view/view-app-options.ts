/**
 * The options of the viewer's app (`kloop view`, src/view/view-server.ts):
 * the notebook, the study, the token that unlocks changes and the loaders of
 * the optional pages.
 */
import type { StudyDatabase } from '../storage/study-database.ts';
import type { ActivationResult } from '../storage/activation.ts';
import type { CorpusPage } from './study-pages.ts';

/** Options of `createViewApp` (src/view/view-server.ts). */
export interface ViewAppOptions {
  db: StudyDatabase;
  /** The study folder (absolute). */
  studyDir: string;
  /** The bearer token that unlocks changes; null = read-only. */
  token: string | null;
  /**
   * Why the notebook cannot be written (a study folder this process may not
   * write, opened read-only), or absent when it can: every change is then
   * refused (403) with this reason, token or not.
   */
  readOnlyNotebook?: string;
  /** corpusPolicy of the study, for the corpus page. */
  corpusPolicy?: CorpusPage['policy'];
  /** The study's headline figure (see `StudyOverview.headline`); default the composite. */
  headline?: { name: string; complement: boolean };
  /** Loop D's report of the rolling window (the signals page); absent = not available. */
  loadSignals?: () => Promise<unknown>;
  /**
   * An online study's experiments with their looks (`GET /api/online`, the
   * online page; src/online/study/online-view.ts); absent = not an online study.
   */
  loadOnline?: () => Promise<unknown>;
  /** True when the notebook is a simulated run's (`kloop view --simulated`): the pages label it SIMULATED. Default false. */
  simulated?: boolean;
  /** Runs after an activation that moved the pointer, while the study's lease is still held (e.g. the git mirror's sync). */
  afterActivation?: (result: Extract<ActivationResult, { ok: true }>) => Promise<void>;
  /** Host names accepted in the Host header. Default the loopback names. */
  allowedHosts?: readonly string[];
  pollIntervalMs?: number;
  now?: () => Date;
}
