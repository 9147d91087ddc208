/**
 * The loops a schedule runs (src/schedule/schedule.ts): their names, and the
 * job each runs once per tick.
 */
import type { ScheduledLoopName } from '../storage/notebook/schedule-store.ts';

/** The loops of the family (DESIGN.md §5). */
export const LOOP_NAMES = ['A', 'B', 'C', 'D'] as const;
export type LoopName = (typeof LOOP_NAMES)[number];
/** The loops of an online study's schedule (src/online/study/online-schedule.ts). */
export type OnlineLoopName = 'fast' | 'slow';
/** What a loop job returns. */
export interface LoopJobResult {
  outcome: 'ok' | 'failed' | 'skipped' | 'interrupted';
  detail: Record<string, unknown>;
}

/** One loop job: runs once per tick; `signal` aborts when the schedule stops. */
export type LoopJob = (context: {
  loop: ScheduledLoopName;
  scheduledAt: Date;
  signal: AbortSignal;
  now: () => Date;
}) => Promise<LoopJobResult>;

/** A loop with its cadence and job. */
export interface ScheduledLoop {
  name: ScheduledLoopName;
  /** Cron pattern (5 or 6 fields); null = on no cadence (only {@link RunningSchedule.runNow} runs it). */
  pattern: string | null;
  run: LoopJob;
}
