/**
 * One run of a periodic task shared by every caller that asks for it: the
 * coordinator's sweep of gone workers (src/storage/worker-sweep.ts) is asked
 * for by each evaluation waiting on the job queue, every
 * `COORDINATOR_POLL_MS` — with a round's screening scored at once, dozens
 * wait together, and each used to sweep on its own (two queries each, dozens
 * a second, on the two cores the workers also need).
 */

/**
 * Wraps `work` so that it runs at most once per `intervalMs` whoever asks:
 * a call while a run is in progress gets that run's promise (its result or
 * its error), a call within `intervalMs` of the last start resolves at once
 * without running it, any other call starts a run.
 *
 * @param work the task (its errors reach the callers that share the run)
 * @param intervalMs the least time between two starts, in milliseconds
 * @param now the clock, in milliseconds (default `Date.now`)
 */
export function throttleShared(
  work: () => Promise<void>,
  intervalMs: number,
  now: () => number = Date.now,
): () => Promise<void> {
  let lastStart = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | undefined;
  return () => {
    if (running !== undefined) return running;
    if (now() - lastStart < intervalMs) return Promise.resolve();
    lastStart = now();
    const run = work().finally(() => {
      running = undefined;
    });
    running = run;
    return run;
  };
}
