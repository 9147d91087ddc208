/**
 * One run of Loop C (pattern mining) and of Loop D (production feedback) on
 * a study: analyse, then send the findings for review (`governance.ts`).
 * These are what `kloop schedule` runs on the slow cadence, and what
 * `kloop signals mine|report --enqueue` run by hand.
 *
 * Inputs are read-only: the signals of the rolling window, the corpus gold
 * of the optimization and anchor partitions (never shadow: the hold-out stays
 * unseen by anything that proposes), the pattern library (built-in + the
 * study's `patterns/`) and the active artifact's section names. The only
 * writes are review items (and admissions, when a hook is given).
 */
import type { Pattern } from '../assembly/pattern.ts';
import type { IntentExample } from '../corpus/intent-example.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { RoleIndex } from './candidate-pattern.ts';
import { createRoleIndex } from './candidate-pattern.ts';
import type { AdmitExample, EnqueueFindingsResult } from './governance.ts';
import { enqueueMiningFindings, enqueueSignalFindings } from './governance.ts';
import type { MiningReport } from './mining.ts';
import { createShapeMiner } from './mining.ts';
import { signalWindow } from './analysis.ts';
import type { SignalReport } from './signal-report.ts';
import { artifactSectionNames, buildSignalReport } from './signal-report.ts';
import { forEachSignalInRange } from './signal-store.ts';
import type { SignalsConfig } from '../config/signals-config.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../config/signals-config.ts';

/** Inputs of {@link runLoopC} and {@link runLoopD}. */
export interface SlowLoopOptions {
  db: StudyDatabase;
  /** The `signals` section of `kloop.yaml`. Default: its defaults. */
  settings?: SignalsConfig;
  /** The pattern library. Default none (no library coverage, no deprecation). */
  patterns?: readonly Pattern[];
  /** Corpus examples the loop may read (optimization and anchor partitions only). */
  corpus?: readonly IntentExample[];
  /** Text of the active artifact, for its section names (Loop D deprecation). */
  artifactText?: string;
  /** End of the window. Default now. */
  now?: () => Date;
  /** Send findings to the review queue. Default true. */
  enqueue?: boolean;
  /** Corpus admission of complete candidate examples (Loop C). */
  admitExample?: AdmitExample;
}

/** What one slow-loop run did. */
export interface SlowLoopResult<Report> {
  report: Report;
  /** null when `enqueue` was false. */
  enqueued: EnqueueFindingsResult | null;
}

function roleIndexOf(options: SlowLoopOptions): RoleIndex {
  return createRoleIndex(options.corpus ?? [], options.patterns ?? []);
}

/** One Loop D run: the report of the window, then its candidate patterns to the review queue. */
export async function runLoopD(options: SlowLoopOptions): Promise<SlowLoopResult<SignalReport>> {
  const settings = options.settings ?? DEFAULT_SIGNALS_CONFIG;
  const now = (options.now ?? (() => new Date()))();
  const report = await buildSignalReport(options.db, {
    now,
    settings,
    ...(options.patterns !== undefined ? { patterns: options.patterns } : {}),
    ...(options.artifactText !== undefined ? { knownSections: artifactSectionNames(options.artifactText) } : {}),
    roleIndex: roleIndexOf(options),
  });
  const enqueued =
    options.enqueue === false
      ? null
      : await enqueueSignalFindings(options.db, report, { ...(options.now !== undefined ? { now: options.now } : {}) });
  return { report, enqueued };
}

/** The Loop C mining report of the window (read-only). */
export async function buildMiningReport(options: SlowLoopOptions): Promise<MiningReport> {
  const settings = options.settings ?? DEFAULT_SIGNALS_CONFIG;
  const now = (options.now ?? (() => new Date()))();
  const window = signalWindow(now, settings.windowDays);
  const miner = createShapeMiner({
    corpus: options.corpus ?? [],
    patterns: options.patterns ?? [],
    settings: settings.mining,
    roleIndex: roleIndexOf(options),
  });
  await forEachSignalInRange(options.db, { from: new Date(window.from), to: new Date(window.to) }, (signal) =>
    miner.addSignal(signal),
  );
  return miner.finish();
}

/** One Loop C run: mine shapes, then candidate patterns and examples to the review queue (or admission). */
export async function runLoopC(options: SlowLoopOptions): Promise<SlowLoopResult<MiningReport>> {
  const report = await buildMiningReport(options);
  const enqueued =
    options.enqueue === false
      ? null
      : await enqueueMiningFindings(options.db, report, {
          ...(options.now !== undefined ? { now: options.now } : {}),
          ...(options.admitExample !== undefined ? { admitExample: options.admitExample } : {}),
        });
  return { report, enqueued };
}
