/**
 * The online study handle: assignment, outcomes and the slow-loop step of a
 * `mode: online` study folder, for an app (the library), `kloop serve`
 * (HTTP) and `kloop run` alike. Only this handle writes the online tables.
 *
 * @example
 * ```js
 * import { openOnlineStudy } from 'kloop';
 * const study = await openOnlineStudy('./outreach');
 * // in a request: the unit's variant, and getActiveArtifactText inside `work` returns it too
 * await study.withAssignment(recipientId, async ({ version, text }) => sendEmail(recipientId, text));
 * // later, when the world answers
 * await study.recordOutcome({ unit: recipientId, metric: 'reply_rate', value: 1, at: new Date() });
 * await study.close();
 * ```
 */
import { InputError } from '../../errors.ts';
import type { StudyDatabase } from '../../storage/study-database.ts';
import { openDatabase, studyDatabaseLocation } from '../../storage/database.ts';
import type { ExposureWindow, OnlineArm, OnlineExperimentRecord } from '../../storage/online-store.ts';
import {
  readOnlineState,
  recordExposures,
  recordOutcomeRefusals,
  recordOutcomes,
  runningOnlineExperiment,
} from '../../storage/online-store.ts';
import { getVersion, withArtifactOverride } from '../../storage/registry.ts';
import { loadOnlineConfig, type OnlineStudyConfig } from '../config.ts';
import { armOf, assignmentSalt } from './assignment.ts';
import {
  checkOutcomes,
  parseOutcome,
  parseOutcomeLines,
  type MetricKinds,
  type OutcomeRefusal,
} from './outcome-lines.ts';

/**
 * How long (real ms) `assign` re-uses the running experiment and the stop it
 * read: a decision of another process's slow loop is seen within this; the
 * handle's own slow-loop step refreshes at once.
 */
export const STATE_CACHE_MS = 1000;

/** Key of `study_state` holding the stop of an online study (JSON `{ reason, detail, at }`). */
export const ONLINE_STOPPED_KEY = 'online:stopped';

/** A unit's assignment: the variant to serve. */
export interface Assignment {
  /** The artifact version id served (the notebook's `artifact_versions.id`). */
  version: number;
  /** The variant's text. */
  text: string;
  arm: OnlineArm;
  experimentId: number;
  window: ExposureWindow;
  /** ISO time of the unit's first exposure in this experiment. */
  exposedAt: string;
}

/** What a batch of outcome lines did. */
export interface OutcomeBatchReport {
  /** Lines stored now. */
  stored: number;
  /** Lines already stored (same unit, metric and time): not counted twice. */
  duplicates: number;
  /** Lines refused, with their line numbers and reasons. */
  refused: OutcomeRefusal[];
}

/** Options of {@link openOnlineStudy}. */
export interface OpenOnlineStudyOptions {
  /** The notebook: a SQLite file or `postgres://` URL; default kloop.yaml's `storage`, else `.kloop/kloop.db`. */
  database?: string;
  /** The clock (a simulated one in tests and `--simulate`). Default the system clock. */
  now?: () => Date;
}

/** An open online study. */
export interface OnlineStudy {
  readonly config: OnlineStudyConfig;
  readonly db: StudyDatabase;
  readonly now: () => Date;
  /**
   * Assigns a unit (sticky) and records its exposure.
   *
   * @throws InputError `online.not_started` before the first `kloop run`, `online.stopped` once the study stopped
   */
  assign(unit: string): Promise<Assignment>;
  /** Assigns several units at once (a batch of sends), as {@link assign} each, in the order given; one statement per 200 units. */
  assignMany(units: readonly string[]): Promise<Assignment[]>;
  /** Assigns `unit` and runs `work` with its variant as the active artifact (`getActiveArtifactText`) for that async context only. */
  withAssignment<T>(unit: string, work: (assignment: Assignment) => Promise<T>): Promise<T>;
  /**
   * Records one outcome; a re-sent one is a duplicate (stored once).
   *
   * @throws InputError `online.outcome_refused` for an unknown unit or metric, a bad value or time (nothing stored)
   */
  recordOutcome(outcome: {
    unit: string;
    metric: string;
    value: number;
    at: string | number | Date;
  }): Promise<{ duplicate: boolean }>;
  /** Records NDJSON outcome lines; refused lines are counted, recorded and returned with their line numbers. */
  recordOutcomeLines(text: string, source: string): Promise<OutcomeBatchReport>;
  /** Forgets the cached study state (running experiment, stop), so the next assign reads the notebook. */
  refresh(): void;
  close(): Promise<void>;
}

/** The study's metrics by name, with their kind. */
export function metricKinds(config: OnlineStudyConfig): MetricKinds {
  return new Map([config.metrics.primary, ...config.metrics.guardrails].map((metric) => [metric.name, metric.kind]));
}

/**
 * Opens an online study folder (`mode: online` in kloop.yaml) and its notebook.
 *
 * @throws InputError when kloop.yaml is not a valid online study (file, line, field)
 */
export async function openOnlineStudy(studyDir: string, options: OpenOnlineStudyOptions = {}): Promise<OnlineStudy> {
  const config = loadOnlineConfig(studyDir);
  const db = await openDatabase(options.database ?? studyDatabaseLocation(config.dir));
  return createOnlineStudy(config, db, options.now ?? (() => new Date()));
}

/** The study's state as assign reads it. */
interface AssignerState {
  fetchedAt: number;
  stopped: string | undefined;
  experiment: OnlineExperimentRecord | undefined;
}

/** What the assigner keeps between calls. */
interface AssignerContext {
  config: OnlineStudyConfig;
  db: StudyDatabase;
  now: () => Date;
  salt: ReturnType<typeof assignmentSalt>;
  /** Version texts by version id, read once. */
  texts: Map<number, string>;
  /** Kept for STATE_CACHE_MS of real time (another process's slow loop is seen within that); refresh() forgets it. */
  state: AssignerState | undefined;
}

/** The cached study state, read again once older than STATE_CACHE_MS. */
async function readAssignerState(context: AssignerContext): Promise<AssignerState> {
  if (context.state !== undefined && performance.now() - context.state.fetchedAt < STATE_CACHE_MS) return context.state;
  context.state = {
    fetchedAt: performance.now(),
    stopped: await readOnlineState(context.db, ONLINE_STOPPED_KEY),
    experiment: await runningOnlineExperiment(context.db),
  };
  return context.state;
}

/** Throws InputError `online.bad_unit` unless every unit id is a non-empty string of at most 200 characters. */
function checkUnits(units: readonly string[]): void {
  for (const unit of units) {
    if (typeof unit !== 'string' || unit === '' || unit.length > 200)
      throw new InputError('a unit id is a non-empty string of at most 200 characters', {
        field: 'unit',
        code: 'online.bad_unit',
      });
  }
}

/** The running experiment and the time now; throws InputError when the study has stopped, has not started, or the clock went back. */
async function liveExperiment(context: AssignerContext): Promise<{ experiment: OnlineExperimentRecord; at: Date }> {
  const { config } = context;
  const { stopped, experiment } = await readAssignerState(context);
  if (stopped !== undefined) {
    const { reason } = JSON.parse(stopped) as { reason: string };
    throw new InputError(
      `the online study has stopped (${reason}): it assigns no more units; serve the active version (kloop status) or start a new study`,
      { code: 'online.stopped', studyPath: config.dir },
    );
  }
  if (experiment === undefined)
    throw new InputError(
      'the online study has not started: run `kloop run <study>` once to start its first experiment',
      { code: 'online.not_started', studyPath: config.dir },
    );
  const at = context.now();
  if (at.toISOString() < experiment.startedAt) {
    throw new InputError(
      `the clock (${at.toISOString()}) is before the start of experiment ${experiment.id} (${experiment.startedAt}): a clock that goes backwards is refused`,
      { code: 'online.clock', studyPath: config.dir },
    );
  }
  return { experiment, at };
}

/** Draws each unit's arm and records its exposure (the units already exposed keep theirs). */
function exposeUnits(
  context: AssignerContext,
  experiment: OnlineExperimentRecord,
  units: readonly string[],
  at: Date,
): ReturnType<typeof recordExposures> {
  const { config } = context;
  const window: ExposureWindow = experiment.status === 'confirmation' ? 'confirmation' : 'decision';
  // The A/A calibration and the confirmation window run at the full split; the decision window follows the ramp.
  const share =
    window === 'confirmation' || experiment.kind === 'aa'
      ? config.metrics.split
      : config.metrics.ramp[Math.min(experiment.rampStep, config.metrics.ramp.length - 1)]!;
  const exposedAt = at.toISOString();
  const attributionEndsAt = new Date(at.getTime() + config.metrics.attributionWindowMs).toISOString();
  return recordExposures(
    context.db,
    units.map((unit) => {
      const arm = armOf(context.salt, experiment.id, unit, share);
      return {
        experimentId: experiment.id,
        unit,
        arm,
        versionId: arm === 'candidate' ? experiment.candidateVersionId : experiment.incumbentVersionId,
        window,
        share,
        exposedAt,
        attributionEndsAt,
      };
    }),
  );
}

/** The assignments of recorded exposures, each with its version's text. */
async function assignmentsOf(
  context: AssignerContext,
  experiment: OnlineExperimentRecord,
  exposures: Awaited<ReturnType<typeof recordExposures>>,
): Promise<Assignment[]> {
  const assignments: Assignment[] = [];
  for (const exposure of exposures) {
    let text = context.texts.get(exposure.versionId);
    if (text === undefined) {
      text = (await getVersion(context.db, exposure.versionId))?.text ?? '';
      context.texts.set(exposure.versionId, text);
    }
    assignments.push({
      version: exposure.versionId,
      text,
      arm: exposure.arm,
      experimentId: experiment.id,
      window: exposure.window,
      exposedAt: exposure.exposedAt,
    });
  }
  return assignments;
}

/** Assigns units to the running experiment's arms, recording each exposure. */
async function assignUnits(context: AssignerContext, units: readonly string[]): Promise<Assignment[]> {
  checkUnits(units);
  const { experiment, at } = await liveExperiment(context);
  const exposures = await exposeUnits(context, experiment, units, at);
  return assignmentsOf(context, experiment, exposures);
}

/** The assignment half of the handle: sticky assignment with its exposures, over a cached read of the study's state. */
function createAssigner(
  config: OnlineStudyConfig,
  db: StudyDatabase,
  now: () => Date,
): { assignMany: OnlineStudy['assignMany']; refresh: () => void } {
  const context: AssignerContext = {
    config,
    db,
    now,
    salt: assignmentSalt(config.seed),
    texts: new Map<number, string>(),
    state: undefined,
  };
  return {
    assignMany: (units) => assignUnits(context, units),
    refresh() {
      context.state = undefined;
    },
  };
}

/** The handle over an open notebook (the CLI opens its own). */
export function createOnlineStudy(config: OnlineStudyConfig, db: StudyDatabase, now: () => Date): OnlineStudy {
  const metrics = metricKinds(config);
  const { assignMany, refresh } = createAssigner(config, db, now);
  const assign = async (unit: string): Promise<Assignment> => (await assignMany([unit]))[0]!;

  async function storeChecked(
    parsed: Parameters<typeof checkOutcomes>[1],
    refusedEarlier: OutcomeRefusal[],
    source: string,
  ): Promise<OutcomeBatchReport> {
    const at = now();
    const checked = await checkOutcomes(db, parsed, metrics, at);
    const refused = [...refusedEarlier, ...checked.refusals].sort((left, right) => left.line - right.line);
    const counts = await recordOutcomes(
      db,
      checked.accepted.map((entry) => entry.outcome),
      source,
      at.toISOString(),
    );
    await recordOutcomeRefusals(db, refused, source, at.toISOString());
    return { ...counts, refused };
  }

  return {
    config,
    db,
    now,
    assign,
    assignMany,
    async withAssignment(unit, work) {
      const assignment = await assign(unit);
      return withArtifactOverride(assignment.text, () => work(assignment));
    },
    async recordOutcome(outcome) {
      const parsed = parseOutcome({
        ...outcome,
        at: outcome.at instanceof Date ? outcome.at.toISOString() : outcome.at,
      });
      if (!parsed.ok) throw new InputError(`outcome refused: ${parsed.reason}`, { code: 'online.outcome_refused' });
      const report = await storeChecked(
        [{ line: 1, text: JSON.stringify(outcome), outcome: parsed.outcome }],
        [],
        'library',
      );
      if (report.refused.length > 0)
        throw new InputError(`outcome refused: ${report.refused[0]!.reason}`, { code: 'online.outcome_refused' });
      return { duplicate: report.duplicates === 1 };
    },
    async recordOutcomeLines(text, source) {
      const { parsed, refusals } = parseOutcomeLines(text);
      return storeChecked(parsed, refusals, source);
    },
    refresh,
    close: () => db.destroy(),
  };
}
