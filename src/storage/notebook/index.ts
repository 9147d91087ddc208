/**
 * The notebook interface (issue 32, item 2): one typed interface for every
 * read and write kloop makes of a study's lab notebook — experiments,
 * evaluations and their per-example results, versions and activation
 * moves, calibrations, the corpus lifecycle, proposer calls, runs and
 * leases' run rows, Loop A, the review queue, schedules, signals, the
 * response cache and what the viewer, the report, `kloop doctor` and
 * `kloop status` read.
 *
 * Each concept's store module beside this file holds its queries, as plain
 * functions taking the database first (`fn(db, …)`), and declares its
 * part of the interface (`ExperimentsStore`, `CorpusStore`, …) without the
 * database; the prompt registry's (versions and activation) is
 * src/storage/registry.ts's `RegistryStore`. {@link Notebook} is their
 * union, with {@link NotebookTransactions.transaction} (the notebook bound
 * to one transaction), and {@link openNotebook}
 * binds every store function to one database handle: SQLite or PostgreSQL
 * (src/storage/database.ts chooses the dialect), the same queries on both.
 * Nothing outside src/storage/ issues SQL (src/storage/sql-boundary.test.ts);
 * the notebook contract suite (notebook-contract.test.ts) holds both
 * backends to this interface.
 *
 * @module
 */
import * as registryStore from '../registry.ts';
import type { RegistryStore } from '../registry.ts';
import type { StudyDatabase } from '../study-database.ts';
import * as calibrationPowerStore from './calibration-power-store.ts';
import * as calibrationsStore from './calibrations-store.ts';
import * as corpusStore from './corpus-store.ts';
import * as doctorQueries from './doctor-queries.ts';
import * as engineRunsStore from './engine-runs-store.ts';
import * as evaluationsStore from './evaluations-store.ts';
import * as experimentsStore from './experiments-store.ts';
import * as historyQueries from './history-queries.ts';
import * as lifecycleMovesStore from './lifecycle-moves-store.ts';
import * as loopAStore from './loop-a-store.ts';
import * as proposalsStore from './proposals-store.ts';
import * as reportQueries from './report-queries.ts';
import * as resetStore from './reset-store.ts';
import * as responseCacheStore from './response-cache-store.ts';
import * as reviewStore from './review-store.ts';
import * as runQueries from './run-queries.ts';
import * as scheduleStore from './schedule-store.ts';
import * as signalsStore from './signals-store.ts';
import * as snapshotQueries from './snapshot-queries.ts';
import * as statusQueries from './status-queries.ts';
import * as viewQueries from './view-queries.ts';
import * as viewResultsQueries from './view-results-queries.ts';
import type { CalibrationPowerStore } from './calibration-power-store.ts';
import type { CalibrationsStore } from './calibrations-store.ts';
import type { CorpusStore } from './corpus-store.ts';
import type { DoctorStore } from './doctor-queries.ts';
import type { EngineRunsStore } from './engine-runs-store.ts';
import type { EvaluationsStore } from './evaluations-store.ts';
import type { ExperimentsStore } from './experiments-store.ts';
import type { HistoryQueriesStore } from './history-queries.ts';
import type { LifecycleMovesStore } from './lifecycle-moves-store.ts';
import type { LoopAStore } from './loop-a-store.ts';
import type { ProposalsStore } from './proposals-store.ts';
import type { ReportStore } from './report-queries.ts';
import type { ResetStore } from './reset-store.ts';
import type { ResponseCacheStore } from './response-cache-store.ts';
import type { ReviewStore } from './review-store.ts';
import type { RunQueriesStore } from './run-queries.ts';
import type { ScheduleStore } from './schedule-store.ts';
import type { SignalsStore } from './signals-store.ts';
import type { SnapshotStore } from './snapshot-queries.ts';
import type { StatusQueriesStore } from './status-queries.ts';
import type { ViewStore } from './view-queries.ts';
import type { ViewResultsStore } from './view-results-queries.ts';

/** Every store's functions, each with the database as its first argument left out. */
export interface Notebook
  extends CalibrationPowerStore,
    CalibrationsStore,
    CorpusStore,
    DoctorStore,
    EngineRunsStore,
    EvaluationsStore,
    ExperimentsStore,
    HistoryQueriesStore,
    LifecycleMovesStore,
    LoopAStore,
    ProposalsStore,
    RegistryStore,
    ReportStore,
    ResetStore,
    ResponseCacheStore,
    ReviewStore,
    RunQueriesStore,
    ScheduleStore,
    SignalsStore,
    SnapshotStore,
    StatusQueriesStore,
    ViewStore,
    ViewResultsStore,
    NotebookTransactions {}

/** A notebook's transactions: the notebook bound to one transaction of its database. */
export interface NotebookTransactions {
  /**
   * Runs `work` with the notebook bound to a transaction of the database:
   * everything it writes through that notebook commits when it resolves, and
   * none of it when it throws (the error is rethrown). Transactions do not
   * nest: `work` must not open another.
   */
  transaction<T>(work: (notebook: Notebook) => Promise<T>): Promise<T>;
}

/** A store module's functions taking the database first, bound to `db`. */
type BoundStore<Module> = {
  [Name in keyof Module as Module[Name] extends (db: StudyDatabase, ...rest: never[]) => unknown
    ? Name
    : never]: Module[Name] extends (db: StudyDatabase, ...rest: infer Rest) => infer Result
    ? (...rest: Rest) => Result
    : never;
};

/** `module`'s exported functions bound to `db` (each takes the database first). */
function bindStore<Module extends object>(db: StudyDatabase, module: Module): BoundStore<Module> {
  const bound: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(module))
    if (typeof value === 'function') bound[name] = (...rest: unknown[]) => value(db, ...rest);
  return bound as BoundStore<Module>;
}

/**
 * The notebook of `db`: every store function bound to it. Opening costs
 * nothing (no query); the handle's transactions and its lifetime stay the
 * caller's (`db.destroy()` closes it).
 *
 * @example
 * ```ts
 * const notebook = openNotebook(await openDatabase(studyDatabasePath(folder)));
 * const evaluated = await notebook.countEvaluatedExperiments();
 * ```
 */
export function openNotebook(db: StudyDatabase): Notebook {
  // The synchronous history reader takes a statement runner, not the database (corpus-members-file.ts): not the notebook's.
  const { readHistorySync: _sync, ...corpus } = corpusStore;
  // The artifact override is context-local (AsyncLocalStorage), no database's: not the notebook's.
  const { withArtifactOverride: _override, currentArtifactOverride: _current, ...registry } = registryStore;
  return {
    ...bindStore(db, calibrationPowerStore),
    ...bindStore(db, calibrationsStore),
    ...bindStore(db, corpus),
    ...bindStore(db, doctorQueries),
    ...bindStore(db, engineRunsStore),
    ...bindStore(db, evaluationsStore),
    ...bindStore(db, experimentsStore),
    ...bindStore(db, historyQueries),
    ...bindStore(db, lifecycleMovesStore),
    ...bindStore(db, loopAStore),
    ...bindStore(db, proposalsStore),
    ...bindStore(db, registry),
    ...bindStore(db, reportQueries),
    ...bindStore(db, resetStore),
    ...bindStore(db, responseCacheStore),
    ...bindStore(db, reviewStore),
    ...bindStore(db, runQueries),
    ...bindStore(db, scheduleStore),
    ...bindStore(db, signalsStore),
    ...bindStore(db, snapshotQueries),
    ...bindStore(db, statusQueries),
    ...bindStore(db, viewQueries),
    ...bindStore(db, viewResultsQueries),
    // Generic functions keep their type parameter only when bound by hand.
    readSnapshotRows: (table) => snapshotQueries.readSnapshotRows(db, table),
    transaction: (work) => db.transaction().execute((transaction) => work(openNotebook(transaction))),
  };
}
