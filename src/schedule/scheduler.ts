/**
 * When a schedule's cadences fire, and what time it is: the real scheduler
 * (croner timers) and a manual one whose clock moves only when told.
 */
import { Cron } from 'croner';

/** A scheduled task handle. */
export interface ScheduledTask {
  /** The next fire time, or null when stopped or never again. */
  nextRun(): Date | null;
  stop(): void;
}

/** When cadences fire, and what time it is (the contract every scheduler implements). */
export interface Scheduler {
  /** Calls `fire(scheduledAt)` every time `pattern` (cron, 5 or 6 fields) matches, until stopped. */
  schedule(pattern: string, fire: (scheduledAt: Date) => Promise<void>): ScheduledTask;
  now(): Date;
}

/**
 * The real scheduler: one croner job per cadence, `protect: true` (a tick
 * that comes while the previous callback still runs is skipped by croner).
 *
 * @param timezone IANA zone of the cadences; default the system's
 */
export function createCronScheduler(options: { timezone?: string } = {}): Scheduler {
  return {
    schedule(pattern, fire) {
      const job = new Cron(
        pattern,
        { protect: true, catch: true, ...(options.timezone !== undefined ? { timezone: options.timezone } : {}) },
        async (self) => {
          await fire(self.currentRun() ?? new Date());
        },
      );
      return { nextRun: () => job.nextRun(), stop: () => job.stop() };
    },
    now: () => new Date(),
  };
}

/** A scheduler whose clock moves only when told (tests, simulations). */
export interface ManualScheduler extends Scheduler {
  /**
   * Moves the clock to `target`, firing every cadence due on the way in time
   * order (ties in registration order). With `waitForJobs` (default true)
   * each fired job finishes before the clock moves on, as if it took no time;
   * without it, jobs are left running (to provoke overlaps).
   *
   * @returns the number of ticks fired
   */
  advanceTo(target: Date, options?: { waitForJobs?: boolean }): Promise<number>;
  /** Waits for every job fired so far. */
  settle(): Promise<void>;
}

/**
 * Creates a {@link ManualScheduler} starting at `start`. Fire times are
 * croner's own `nextRun` computations, so they match the real scheduler's.
 */
export function createManualScheduler(start: Date, options: { timezone?: string } = {}): ManualScheduler {
  let clock = new Date(start.getTime());
  const tasks: Array<{ cron: Cron; next: Date | null; fire: (scheduledAt: Date) => Promise<void> }> = [];
  const running = new Set<Promise<void>>();
  return {
    schedule(pattern, fire) {
      const cron = new Cron(pattern, {
        paused: true,
        ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
      });
      const task = { cron, next: cron.nextRun(clock), fire };
      tasks.push(task);
      return {
        nextRun: () => task.next,
        stop: () => {
          task.next = null;
          cron.stop();
        },
      };
    },
    now: () => new Date(clock.getTime()),
    async advanceTo(target, advanceOptions = {}) {
      const wait = advanceOptions.waitForJobs !== false;
      let fired = 0;
      for (;;) {
        let due: (typeof tasks)[number] | undefined;
        for (const task of tasks) {
          if (task.next === null || task.next.getTime() > target.getTime()) continue;
          if (due === undefined || task.next.getTime() < due.next!.getTime()) due = task;
        }
        if (due === undefined) break;
        const at = due.next!;
        clock = new Date(at.getTime());
        due.next = due.cron.nextRun(at);
        fired += 1;
        const promise = due.fire(new Date(at.getTime()));
        running.add(promise);
        void promise.finally(() => running.delete(promise));
        if (wait) await promise;
        else await Promise.resolve();
      }
      if (target.getTime() > clock.getTime()) clock = new Date(target.getTime());
      return fired;
    },
    async settle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
