/**
 * What `kloop view` shows of an online study (`GET /api/online`): every
 * experiment's standing (arms, units per window, lift, interval, decision,
 * the checks of its last look) and the series of its looks as they were
 * stored (`online_looks`, one row per look of the online gate: never
 * recomputed), plus the stop and the active version. Read-only.
 */
import type { StudyDatabase } from '../../storage/study-database.ts';
import { listOnlineLooks, readOnlineState, type OnlineLookRecord } from '../../storage/online-store.ts';
import { getRegistryVersion } from '../../storage/registry.ts';
import { readOnlineClockEnd } from '../../storage/notebook/view-queries.ts';
import type { OnlineStudyConfig } from '../config.ts';
import { ONLINE_STOPPED_KEY } from './online-study.ts';
import { describeStandings, type ExperimentStanding } from './standing.ts';
import { ONLINE_STOP_REASONS, type OnlineStopReason } from './stop-reasons.ts';

/** The online page's data. */
export interface OnlineView {
  mode: 'online';
  /** True for the notebook of a `--simulate` run: every figure comes from the simulated audience. */
  simulated: boolean;
  /** The time the standings are computed at (ISO): now, or the simulated clock's last step. */
  at: string;
  primary: OnlineStudyConfig['metrics']['primary'];
  guardrails: { name: string; direction: string; margin: number }[];
  activeVersionId: number | null;
  stopped: { reason: OnlineStopReason; meaning: string; detail: string; at: string } | null;
  /** Every experiment, oldest first, with its looks (oldest first). */
  experiments: OnlineViewExperiment[];
}

/** An experiment's standing with the looks stored for it, oldest first. */
export type OnlineViewExperiment = ExperimentStanding & { series: Omit<OnlineLookRecord, 'experimentId'>[] };

/** The time a simulated notebook's clock stopped at: the latest start or decision of its experiments (or of its looks). */
export async function simulatedClockEnd(db: StudyDatabase): Promise<string> {
  return readOnlineClockEnd(db);
}

/**
 * Reads the online page's data from the notebook.
 *
 * @param options.simulated the notebook is a `--simulate` run's: standings at its clock's end, labelled simulated
 * @param options.now the clock for a real study's standings; default the system clock
 */
export async function loadOnlineView(
  db: StudyDatabase,
  config: OnlineStudyConfig,
  options: { simulated?: boolean; now?: () => Date } = {},
): Promise<OnlineView> {
  const simulated = options.simulated === true;
  const at = simulated ? await simulatedClockEnd(db) : (options.now?.() ?? new Date()).toISOString();
  const standings = await describeStandings(db, config, at);
  const looks = await listOnlineLooks(db);
  const stoppedText = await readOnlineState(db, ONLINE_STOPPED_KEY);
  const stopped =
    stoppedText === undefined
      ? null
      : (JSON.parse(stoppedText) as { reason: OnlineStopReason; detail: string; at: string });
  return {
    mode: 'online',
    simulated,
    at,
    primary: config.metrics.primary,
    guardrails: config.metrics.guardrails.map((guardrail) => ({
      name: guardrail.name,
      direction: guardrail.direction,
      margin: guardrail.margin,
    })),
    activeVersionId: (await getRegistryVersion(db))?.id ?? null,
    stopped:
      stopped === null
        ? null
        : { ...stopped, meaning: ONLINE_STOP_REASONS[stopped.reason]?.meaning ?? 'unknown stop reason' },
    experiments: standings.map((standing) => ({
      ...standing,
      series: looks
        .filter((look) => look.experimentId === standing.id)
        .map(({ experimentId: _experimentId, ...look }) => look),
    })),
  };
}
