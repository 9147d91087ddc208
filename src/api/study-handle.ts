/**
 * The study `createStudy` returns (src/api/create-study.ts): `optimize()`,
 * the ask-and-tell primitives, `best()` and `close()`, over one open
 * notebook and its lease. One operation runs at a time, in call order.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { contentHash } from '../artifact/content-hash.ts';
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { InputError } from '../errors.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { GateCalibration } from '../gate/gate.ts';
import { createLoopEngine, ensureSeedVersion, type LoopEngine, type Told } from '../loop/engine.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import type { ScreenedCandidate } from '../loop/integrate.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { runStudy, type RunEvent, type RunOutcome } from '../loop/run-study.ts';
import type { Candidate } from '../proposers/proposer.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { LeaseHeartbeat, LeaseRecord } from '../storage/lease.ts';
import { releaseLease } from '../storage/lease.ts';
import type { StudySettings } from '../study/study-settings.ts';
import type { CallerOutputs, CallerResult } from './caller-outputs.ts';
import type { Study, StudyBest } from './study-types.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/** What the handle works on: the composed study, its notebook and lease, and the options of its runs. */
export interface StudyHandleInputs {
  study: LoadedStudy;
  db: StudyDatabase;
  lease: LeaseRecord;
  heartbeat: LeaseHeartbeat;
  outputs: CallerOutputs;
  /** The run settings the study was composed with (`study.settings`). */
  settings: StudySettings;
  /** The seed artifact's text (the baseline `optimize()` reports). */
  seedText: string;
  calibration?: GateCalibration;
  onEvent?: (event: RunEvent) => void;
  signal?: AbortSignal;
}

/** The handle's state: its inputs, the engine of the open run, the open round's candidates, the last stop. */
interface HandleState extends StudyHandleInputs {
  runOptions: Parameters<typeof runStudy>[0];
  engine: LoopEngine | null;
  asked: Candidate[];
  told: Set<Candidate>;
  stop: RunOutcome | null;
  closed: boolean;
  inside: AsyncLocalStorage<string>;
  queue: Promise<unknown>;
}

/** Creates the study handle over an open notebook whose lease is held. */
export function createStudyHandle(inputs: StudyHandleInputs): Study {
  const state: HandleState = {
    ...inputs,
    runOptions: {
      study: inputs.study,
      notebook: openNotebook(inputs.db),
      ...(inputs.calibration !== undefined ? { calibration: inputs.calibration } : {}),
      ...(inputs.onEvent !== undefined ? { onEvent: inputs.onEvent } : {}),
      ...(inputs.signal !== undefined ? { signal: inputs.signal } : {}),
    },
    engine: null,
    asked: [],
    told: new Set(),
    stop: null,
    closed: false,
    inside: new AsyncLocalStorage<string>(),
    queue: Promise.resolve(),
  };
  const { study } = inputs;
  return {
    dir: study.dir,
    task: study.task,
    settings: structuredClone(inputs.settings),
    optimize: () => serial(state, 'optimize', () => optimize(state)),
    ask: () => serial(state, 'ask', () => ask(state)),
    tell: (candidate, results) => serial(state, 'tell', () => tell(state, candidate, results)),
    stopped: () => state.stop,
    best: () => best(state),
    close: () => serial(state, 'close', () => close(state)),
  };
}

/**
 * Runs `work` after every operation called before it. One operation at a time, in call order: optimize(),
 * ask(), tell() and close() read and write the open round, so two at once would gate candidates against a
 * stale incumbent (two tells accepted against the same seed) or record a run twice. A call from within one of
 * them (a proposer or onEvent calling back into the study) would wait for itself: it is refused instead.
 */
function serial<T>(state: HandleState, name: string, work: () => Promise<T>): Promise<T> {
  const running = state.inside.getStore();
  if (running !== undefined)
    return Promise.reject(
      new InputError(
        `${name}() was called from within this study's ${running}() (a proposer, execute or onEvent calling back into the study): it would wait for itself`,
        { field: 'study' },
      ),
    );
  const result = state.queue.then(() => state.inside.run(name, work));
  state.queue = result.catch(() => undefined);
  return result;
}

function requireOpen(state: HandleState): void {
  if (state.closed) throw new InputError('the study is closed', { field: 'study' });
}

/** The composite of `text` on each partition. */
async function scoresOf(state: HandleState, text: string): Promise<Record<PartitionName, number | null>> {
  const evaluator = createStudyEvaluator(state.study, openNotebook(state.db));
  const scores = {} as Record<PartitionName, number | null>;
  for (const name of PARTITIONS) {
    const score: PartitionScore = await evaluatePartition(evaluator, state.study, text, name, state.signal);
    scores[name] = score.composite;
  }
  return scores;
}

async function best(state: HandleState): Promise<StudyBest> {
  requireOpen(state);
  // Before the first ask() or optimize() the seed is registered now (as version 1, what the first run registers): the id is one kloop diff and activate know.
  const active = await ensureSeedVersion(openNotebook(state.db), state.study, () => new Date());
  return { versionId: active.id, text: active.text, scores: await scoresOf(state, active.text) };
}

/** Ends the open run of ask-and-tell, if any: its round, then the run (as interrupted when it had not stopped). */
async function endEngine(state: HandleState): Promise<void> {
  const engine = state.engine;
  if (engine === null) return;
  if (engine.currentRound() !== null) {
    const ended = await engine.endRound();
    if (ended !== null) state.stop = ended;
  }
  if (state.stop === null || state.stop.runId !== engine.runId)
    state.stop = await engine.finish(
      'interrupted',
      'the library run ended (close() or optimize()); the next run continues from here',
    );
  state.engine = null;
}

async function optimize(state: HandleState) {
  requireOpen(state);
  await endEngine(state);
  const baseline = await scoresOf(state, state.seedText);
  state.stop = await runStudy(state.runOptions);
  return { ...state.stop, baseline, best: await best(state) };
}

async function ask(state: HandleState): Promise<Candidate[]> {
  requireOpen(state);
  try {
    if (state.engine === null) {
      state.engine = await createLoopEngine(state.runOptions);
      state.stop = null;
    }
    const engine = state.engine;
    if (engine.currentRound() !== null) {
      const ended = await engine.endRound();
      if (ended !== null) {
        state.stop = ended;
        return [];
      }
    }
    state.asked = [];
    state.told.clear();
    const opened = await engine.openRound();
    if (opened.kind === 'stop') {
      state.stop = opened.outcome;
      state.engine = null;
      return [];
    }
    const answer = await engine.ask();
    state.asked = answer.candidates;
    return [...state.asked];
  } catch (error) {
    if (state.engine === null) throw error;
    state.stop = await state.engine.fail(error);
    state.engine = null;
    return [];
  }
}

async function tell(state: HandleState, candidate: Candidate, results?: ReadonlyArray<CallerResult>): Promise<Told> {
  requireOpen(state);
  const engine = state.engine;
  if (engine === null || engine.currentRound() === null || !state.asked.includes(candidate)) {
    throw new InputError('tell() takes a candidate of the last ask() of the open round', { field: 'candidate' });
  }
  if (state.told.has(candidate)) throw new InputError('this candidate was told already', { field: 'candidate' });
  state.outputs.take(contentHash(candidate.text), results, 'results');
  const [screened] = (await engine.screen([candidate])) as [ScreenedCandidate];
  const decision = await engine.tell(screened);
  state.told.add(candidate);
  if (state.asked.every((item) => state.told.has(item))) {
    const ended = await engine.endRound();
    if (ended !== null) state.stop = ended;
  }
  if (decision === null) {
    return {
      experimentId: 0,
      decision: 'skipped',
      reason: engine.budgetSpent() ? 'max_experiments' : 'decided_before',
      text: candidate.text,
      optimization: null,
      rebased: false,
    };
  }
  return decision;
}

async function close(state: HandleState): Promise<void> {
  if (state.closed) return;
  try {
    await endEngine(state);
  } finally {
    state.closed = true;
    await state.heartbeat.stop();
    await releaseLease(state.db, state.lease);
    await state.db.destroy();
  }
}
