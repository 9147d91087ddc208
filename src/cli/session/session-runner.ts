/**
 * The session runner: the one place where a CLI command that holds a study,
 * or runs until it is stopped, takes the study's lease and keeps its
 * heartbeat, answers Ctrl-C, SIGTERM and a closed output pipe, prints the
 * report of every stop and sets the exit code (the table of ./exit-codes.ts).
 * `kloop run` (offline, `--loop A`, online), `kloop calibrate`, `kloop
 * schedule` (offline and online), `kloop worker`, `kloop corpus add|promote`
 * and `kloop reset` go through {@link runSession}.
 *
 * What every session does the same way:
 *
 * - **The lease** (src/storage/lease.ts), when the session names one: taken
 *   before the command's work (exit 3 when another process holds it; with
 *   `wait`, waited for, and an interrupt while waiting ends the session with
 *   "interrupted while waiting for the study; nothing was run", exit 130);
 *   renewed by a heartbeat; released on every stop, synchronously when the
 *   process must end at once.
 * - **A lease lost** (taken over while this process looked dead): the
 *   session's signal is aborted, and the session ends with the lease-lost
 *   report (exit 5, code `lease_lost`), whatever the command was doing.
 * - **The first interrupt** (Ctrl-C, SIGTERM, or a closed stdout or stderr):
 *   the session's signal is aborted (the work in flight is abandoned or
 *   asked to finish: the command's choice), the command's notice is printed,
 *   and, with a grace period, the process is ended anyway once it expires
 *   (the lease given back first). **The second** ends the process at once
 *   (exit 130), the lease given back.
 * - **The report of every stop**: the command's body returns its exit code
 *   after printing its report; a body that throws because it was
 *   interrupted has its `interruptedReport` printed (stderr, and stdout with
 *   `--json`) and exits 130.
 *
 * See docs/reliability.md ("Exit codes", "Ctrl-C", "A closed output pipe").
 */
import type { StudyDatabase } from '../../storage/study-database.ts';
import type { LeaseHeartbeat, LeaseRecord } from '../../storage/lease.ts';
import { acquireLease, readLease, releaseLease, releaseLeaseSync, startLeaseHeartbeat } from '../../storage/lease.ts';
import { LeaseLostError, isLeaseLost } from '../../storage/write-fence.ts';
import { printJson, progress } from '../output.ts';
import { onOutputClosed } from './closed-output.ts';
import { EXIT } from './exit-codes.ts';

/** After the first interrupt, a session with a grace period is given this long (milliseconds) to wind down before it is ended anyway. */
export const INTERRUPT_GRACE_MS = 10_000;

/** The lease a session holds for its whole length. */
export interface SessionLease {
  /** The database the lease is kept in. */
  db: StudyDatabase;
  /** The lease's key: the study folder (`<folder>#schedule` for a schedule). */
  studyKey: string;
  /**
   * The database's location (SQLite file or PostgreSQL URL): the heartbeat then runs in a worker
   * thread of its own, and the lease can be given back synchronously when the process must end at
   * once. Without it, a main-thread heartbeat, and no synchronous release.
   */
  location?: string;
  /** Wait for the holder to finish instead of exiting 3 (`--wait`). Default false. */
  wait?: boolean;
  /** What the busy error advises after naming the holder. Default `use --wait to wait`. */
  busyAdvice?: string;
}

/** What a command tells the runner about its session. */
export interface SessionOptions {
  /** No progress lines on stderr (`--quiet`), but for the notices that answer an interrupt. */
  quiet?: boolean;
  /** `--json`: an interrupted report's JSON object is printed on stdout. */
  json?: boolean;
  /** The study's lease, held from before the body runs until the session ends. */
  lease?: SessionLease;
  /** Printed on stderr at the first interrupt once the body runs (e.g. `kloop: interrupted — …`); none by default. */
  interruptNotice?: string;
  /** The notice obeys `quiet`. Default false: an interrupt is always answered. */
  quietNotice?: boolean;
  /**
   * After the first interrupt, end the process anyway after this long (ms), the lease given back:
   * {@link INTERRUPT_GRACE_MS} by default; `null` for a session that lets its work in flight finish
   * (a worker's jobs, a schedule's runs).
   */
  graceMs?: number | null;
  /** Called when the grace period expired, before the lease is given back (e.g. record the run as interrupted). */
  onGraceExpired?: () => Promise<void>;
  /**
   * The report of a body that threw after an interrupt: `message` goes to stderr as `kloop:
   * <message>`, `json` (with `--json`) to stdout, and the session exits 130. Without it, the
   * error is the session's outcome.
   */
  interruptedReport?: () => { message: string; json?: unknown };
  /** What this session wrote before its lease was lost, for the lease-lost report. Default: the writes before the take-over are kept. */
  describeWritten?: () => Promise<string>;
  /** Closes what the session opened (the database): after the lease is given back, on every stop. */
  close?: () => Promise<void>;
}

/** What the body of a session gets. */
export interface SessionContext {
  /** Aborted at the first interrupt (reason `Error('interrupted')`) or when the lease is lost (`Error('lease lost')`). */
  readonly signal: AbortSignal;
  /** True once an interrupt (Ctrl-C, SIGTERM, a closed output) asked the session to stop. */
  readonly interrupted: boolean;
  /** True once the heartbeat found the lease taken over (the session then ends with the lease-lost report, exit 5). */
  readonly leaseLost: boolean;
  /** The lease the session holds (undefined for a session without one). */
  readonly lease: LeaseRecord | undefined;
  /** Resolves when the session is asked to stop (an interrupt, a lost lease), or when `also` aborts. */
  untilStopped(also?: AbortSignal): Promise<void>;
}

/** The state of a running session, shared by its handlers (module-level functions below). */
interface SessionState {
  readonly options: SessionOptions;
  readonly controller: AbortController;
  interrupts: number;
  lease: LeaseRecord | undefined;
  heartbeat: LeaseHeartbeat | undefined;
  /** Set when the heartbeat found the lease taken over. */
  lost: boolean;
  /** The grace period's timer after the first interrupt; cleared when the session ends in time. */
  graceTimer?: NodeJS.Timeout;
}

/**
 * Runs a command's session: the lease (if any), the interrupt handlers, the
 * body, then on every stop the heartbeat stopped, the lease released, the
 * handlers removed and `close` called. Sets `process.exitCode` to what the
 * body returns (130 after an interrupted body's report).
 *
 * @param body the command's work; prints its report and returns the exit code (a code of ./exit-codes.ts)
 * @throws StudyBusyError (exit 3) when another process holds the lease and `wait` is off
 * @throws LeaseLostError (exit 5) when the lease was taken over during the session
 * @throws what the body throws, when it was not interrupted
 */
export async function runSession(
  options: SessionOptions,
  body: (context: SessionContext) => Promise<number>,
): Promise<void> {
  const state: SessionState = {
    options,
    controller: new AbortController(),
    interrupts: 0,
    lease: undefined,
    heartbeat: undefined,
    lost: false,
  };
  const onInterrupt = (): void => interrupt(state);
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  // A closed output pipe (`kloop run … | head`) winds the session down like Ctrl-C.
  const stopWatchingOutput = onOutputClosed(onInterrupt);
  try {
    if (options.lease !== undefined && !(await takeLease(state, options.lease))) {
      process.exitCode = EXIT.interrupted;
      return;
    }
    process.exitCode = await runBody(state, body);
  } finally {
    // Wound down in time: the grace period must not end the process later (a host that runs kloop in-process lives on).
    clearTimeout(state.graceTimer);
    await state.heartbeat?.stop();
    if (state.lease !== undefined) await giveLeaseBack(state, state.lease);
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
    stopWatchingOutput();
    await options.close?.();
  }
}

/** The body, with the lease-lost and the interrupted reports of every way it can end. */
async function runBody(state: SessionState, body: (context: SessionContext) => Promise<number>): Promise<number> {
  const { controller, options } = state;
  const context: SessionContext = {
    signal: controller.signal,
    get interrupted() {
      return state.interrupts > 0;
    },
    get leaseLost() {
      return state.lost;
    },
    get lease() {
      return state.lease;
    },
    untilStopped: (also) => untilAborted([controller.signal, ...(also !== undefined ? [also] : [])]),
  };
  let exitCode: number;
  try {
    exitCode = await body(context);
  } catch (error) {
    // A write refused by the fence (src/storage/write-fence.ts), or any failure after the lease was lost: one report.
    if ((state.lost || isLeaseLost(error)) && state.lease !== undefined) throw await leaseLostError(state, state.lease);
    if (state.interrupts === 0 || options.interruptedReport === undefined) throw error;
    const report = options.interruptedReport();
    progress(`kloop: ${report.message}`);
    if (options.json === true && report.json !== undefined) printJson(report.json);
    return EXIT.interrupted;
  }
  if (state.lost && state.lease !== undefined) throw await leaseLostError(state, state.lease);
  return exitCode;
}

/** Takes the session's lease and starts its heartbeat; false when an interrupt came while waiting for it. */
async function takeLease(state: SessionState, lease: SessionLease): Promise<boolean> {
  const quiet = state.options.quiet === true;
  try {
    state.lease = await acquireLease(lease.db, {
      studyKey: lease.studyKey,
      wait: lease.wait === true,
      signal: state.controller.signal,
      ...(lease.busyAdvice !== undefined ? { busyAdvice: lease.busyAdvice } : {}),
      onWait: (holder) =>
        progress(
          `kloop: study is being run by pid ${holder.pid} on host ${holder.hostname} since ${holder.acquiredAt}; waiting for it to finish (--wait)`,
          quiet,
        ),
      onTakeOver: (previous) =>
        progress(
          `kloop: took over the lease of pid ${previous.pid} on host ${previous.hostname} (since ${previous.acquiredAt}): its process is gone or its heartbeat (${previous.heartbeatAt}) stopped`,
          quiet,
        ),
    });
  } catch (error) {
    if (!state.controller.signal.aborted) throw error;
    progress('kloop: interrupted while waiting for the study; nothing was run', quiet);
    return false;
  }
  state.heartbeat = startLeaseHeartbeat(lease.db, state.lease, {
    ...(lease.location !== undefined ? { file: lease.location } : {}),
    onLost: () => {
      state.lost = true;
      void readLease(lease.db, lease.studyKey)
        .catch(() => undefined)
        .then((holder) => {
          progress(
            `kloop: lost the study lease${holder !== undefined ? ` to pid ${holder.pid} on host ${holder.hostname}` : ''}: stopping`,
          );
          state.controller.abort(new Error('lease lost'));
        });
    },
    onError: (message) => progress(`kloop: WARNING: lease heartbeat failed: ${message}`, quiet),
  });
  return true;
}

/** Ctrl-C, SIGTERM or a closed output: the first asks the session to stop, the second ends the process. */
function interrupt(state: SessionState): void {
  const { options } = state;
  state.interrupts += 1;
  if (state.interrupts > 1) {
    // Quit at once: give the lease back so the next run need not wait; what was open stays as after a crash.
    giveLeaseBackSync(state);
    process.exit(EXIT.interrupted);
  }
  // While the lease is awaited nothing is in flight: the runner's own line says so (takeLease), not the command's notice.
  const waiting = options.lease !== undefined && state.lease === undefined;
  if (options.interruptNotice !== undefined && !waiting)
    progress(options.interruptNotice, options.quietNotice === true && options.quiet === true);
  state.controller.abort(new Error('interrupted'));
  const graceMs = options.graceMs === undefined ? INTERRUPT_GRACE_MS : options.graceMs;
  // A bound on winding down: the command's last word, the lease given back, and the process ended anyway.
  if (graceMs !== null && state.graceTimer === undefined)
    state.graceTimer = setTimeout(() => {
      void windDown(state, graceMs).finally(() => process.exit(EXIT.interrupted));
    }, graceMs).unref();
}

/** The end of a grace period: what the command records, then the lease given back (at most 2 s, then synchronously). */
async function windDown(state: SessionState, graceMs: number): Promise<void> {
  progress(`kloop: still busy ${graceMs / 1000} s after the interrupt: ending the run now`);
  const work = (async () => {
    await state.heartbeat?.stop();
    await state.options.onGraceExpired?.();
    if (state.lease !== undefined && state.options.lease !== undefined)
      await releaseLease(state.options.lease.db, state.lease);
  })();
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  giveLeaseBackSync(state);
}

/** Gives the lease back; when the database refuses, synchronously on a connection of its own. */
async function giveLeaseBack(state: SessionState, lease: LeaseRecord): Promise<void> {
  const db = state.options.lease!.db;
  await releaseLease(db, lease).catch((error: unknown) => {
    if (state.options.lease?.location === undefined) throw error;
    releaseLeaseSync(state.options.lease.location, lease);
  });
}

/** Gives the lease back synchronously (for a process about to exit), when its location is known. */
function giveLeaseBackSync(state: SessionState): void {
  const location = state.options.lease?.location;
  if (state.lease !== undefined && location !== undefined) releaseLeaseSync(location, state.lease);
}

/**
 * The report of a session whose lease was taken over: who holds the study
 * now, and what this session wrote before its writes were refused (read-only:
 * the fence refuses every write). Exit code 5, code `lease_lost`.
 */
async function leaseLostError(state: SessionState, lease: LeaseRecord): Promise<LeaseLostError> {
  const db = state.options.lease!.db;
  const holder = await readLease(db, lease.studyKey).catch(() => undefined);
  const written =
    (await state.options.describeWritten?.().catch(() => undefined)) ??
    'what this session wrote before the take-over is kept';
  const taker =
    holder !== undefined && holder.ownerId !== lease.ownerId
      ? `pid ${holder.pid} on host ${holder.hostname} took it over at ${holder.acquiredAt} (lease generation ${lease.generation} → ${holder.generation})`
      : `another process took it over (lease generation ${lease.generation} → ${lease.generation + 1}) and has released it since`;
  const fence = { studyKey: lease.studyKey, ownerId: lease.ownerId, generation: lease.generation };
  return new LeaseLostError(
    fence,
    `this run lost the study's lease while it looked dead (paused, or its heartbeat could not reach the database): ${taker}. Its writes were refused from the take-over on (fencing), so nothing was written after it; ${written}. The process holding the lease continues the study; \`kloop status\` shows where it stands`,
  );
}

/** Resolves when any of `signals` aborts. */
function untilAborted(signals: readonly AbortSignal[]): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signals.some((signal) => signal.aborted)) return resolve();
    const done = (): void => {
      for (const signal of signals) signal.removeEventListener('abort', done);
      resolve();
    };
    for (const signal of signals) signal.addEventListener('abort', done, { once: true });
  });
}
