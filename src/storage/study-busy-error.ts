/**
 * The error of a study that is busy: another process holds its run lease
 * (src/storage/lease.ts), or kept its database locked.
 */
import type { KloopErrorOptions } from '../errors.ts';
import { hasErrorMarker, KloopError } from '../errors.ts';
import type { LeaseRecord } from './lease.ts';

/** Exit code of a run refused because another process holds the study's lease. */
export const STUDY_BUSY_EXIT_CODE = 3;

const STUDY_BUSY_ERROR = Symbol.for('kloop.error.study_busy');

/**
 * The study is busy: another process holds its lease (`holder`), or kept its
 * database locked past every try (`holder` undefined). Exit code
 * {@link STUDY_BUSY_EXIT_CODE}, code `study_busy`.
 */
export class StudyBusyError extends KloopError {
  readonly [STUDY_BUSY_ERROR] = true;
  /** Who holds the lease; undefined when the database itself stayed locked. */
  readonly holder: LeaseRecord | undefined;

  /**
   * @param holder the lease's live holder: the message names its pid, host and start
   * @param locked without a holder: the message (and the study, and the SQLite error as `cause`)
   * @param advice what the reader can do, after the holder (default the CLI's: `use --wait to wait`)
   */
  constructor(
    holder: LeaseRecord | undefined,
    locked: { message: string; studyPath?: string; cause?: unknown } = {
      message: 'the study database is locked by another process; use --wait to wait',
    },
    advice = 'use --wait to wait',
  ) {
    const options: KloopErrorOptions & { code: string; exitCode: number } = {
      code: 'study_busy',
      exitCode: STUDY_BUSY_EXIT_CODE,
    };
    if (holder !== undefined) options.studyPath = holder.studyKey;
    else {
      if (locked.studyPath !== undefined) options.studyPath = locked.studyPath;
      if (locked.cause !== undefined) options.cause = locked.cause;
    }
    super(
      holder !== undefined
        ? `study is being run by pid ${holder.pid} on host ${holder.hostname} since ${holder.acquiredAt}; ${advice}`
        : locked.message,
      options,
    );
    this.holder = holder;
  }

  /** True when `value` is a {@link StudyBusyError}, of any copy of kloop (a marker, src/errors.ts). */
  static override isInstance(value: unknown): value is StudyBusyError {
    return hasErrorMarker(value, STUDY_BUSY_ERROR);
  }
}
