import type { IntentExample } from '../corpus/intent-example.ts';
import type { Pattern } from '../assembly/pattern.ts';
import { acceptedAppTypes } from '../tasks/intent/intent.ts';
import { normalizeEntityName } from '../tasks/intent/names.ts';
import type { PatternDraft, RoleIndex } from './candidate-pattern.ts';
import type { StoredSignal } from './signal.ts';
import type { SignalsConfig } from '../config/signals-config.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../config/signals-config.ts';
import { proposeExample, proposePattern } from './mining-drafts.ts';

/** Mining settings (`signals.mining` in `kloop.yaml`). */
export type MiningSettings = SignalsConfig['mining'];

/** An application shape. */
export interface Shape {
  appType: string;
  roles: string[];
  behaviors: string[];
}

/** The key of a shape: `appType|role+role|behavior+behavior`. */
export function shapeKey(shape: Shape): string {
  return `${shape.appType}|${shape.roles.join('+')}|${shape.behaviors.join('+')}`;
}

/** Builds a shape (sets sorted and deduplicated). */
export function createShape(appType: string, roles: Iterable<string>, behaviors: Iterable<string>): Shape {
  return { appType, roles: [...new Set(roles)].sort(), behaviors: [...new Set(behaviors)].sort() };
}

/** The shape of a corpus example, or undefined when its gold has no app type, no roles or no behaviours. */
export function shapeOfExample(example: IntentExample): Shape | undefined {
  const appType = acceptedAppTypes(example.expected)[0];
  const roles = (example.expected.entities ?? []).flatMap((entity) => (entity.role !== undefined ? [entity.role] : []));
  if (appType === undefined || roles.length === 0 || example.expected.behaviors === undefined) return undefined;
  return createShape(appType, roles, example.expected.behaviors);
}

/** The shape of a signal, or undefined when it did not send `roles` and `behaviors`. */
export function shapeOfSignal(signal: StoredSignal): Shape | undefined {
  if (signal.roles === undefined || signal.behaviors === undefined) return undefined;
  return createShape(signal.appClass, signal.roles, signal.behaviors);
}

/** How the pattern library covers a shape. */
export interface LibraryCoverage {
  status: 'covered' | 'other-type' | 'missing';
  /** The pattern covering most of the shape (same app type first), or null for an empty library. */
  bestPattern: string | null;
  missingRoles: string[];
  missingBehaviors: string[];
}

/** Library coverage of a shape (see the module comment). */
export function libraryCoverage(shape: Shape, patterns: readonly Pattern[]): LibraryCoverage {
  let best: { pattern: Pattern; missingRoles: string[]; missingBehaviors: string[]; sameType: boolean } | undefined;
  let coveredElsewhere = false;
  for (const pattern of patterns) {
    const roles = new Set<string>(pattern.entities.map((entity) => entity.role));
    const behaviors = new Set<string>(pattern.behaviors);
    const missingRoles = shape.roles.filter((role) => !roles.has(role));
    const missingBehaviors = shape.behaviors.filter((behavior) => !behaviors.has(behavior));
    const sameType = (pattern.appTypes as readonly string[]).includes(shape.appType);
    const missing = missingRoles.length + missingBehaviors.length;
    if (missing === 0 && sameType)
      return { status: 'covered', bestPattern: pattern.id, missingRoles: [], missingBehaviors: [] };
    if (missing === 0) coveredElsewhere = true;
    const bestMissing =
      best === undefined ? Number.POSITIVE_INFINITY : best.missingRoles.length + best.missingBehaviors.length;
    if (best === undefined || missing < bestMissing || (missing === bestMissing && sameType && !best.sameType)) {
      best = { pattern, missingRoles, missingBehaviors, sameType };
    }
  }
  if (best === undefined)
    return { status: 'missing', bestPattern: null, missingRoles: shape.roles, missingBehaviors: shape.behaviors };
  return {
    status: coveredElsewhere ? 'other-type' : 'missing',
    bestPattern: best.pattern.id,
    missingRoles: best.missingRoles,
    missingBehaviors: best.missingBehaviors,
  };
}

/** Whether `outer` contains `inner` (same app type, roles ⊇, behaviours ⊇). */
export function shapeContains(outer: Shape, inner: Shape): boolean {
  return (
    outer.appType === inner.appType &&
    inner.roles.every((role) => outer.roles.includes(role)) &&
    inner.behaviors.every((behavior) => outer.behaviors.includes(behavior))
  );
}

/** One reported shape. */
export interface MinedShape extends Shape {
  key: string;
  /** Signals supporting the shape (their shape contains it). */
  signals: number;
  /** Corpus examples supporting the shape. */
  corpusExamples: number;
  thinInCorpus: boolean;
  library: LibraryCoverage;
  reasons: Array<'missing-in-library' | 'thin-in-corpus'>;
}

/** A candidate pattern for a shape missing from the library. */
export interface MinedCandidatePattern {
  shapeKey: string;
  draft: PatternDraft;
  /** Where the entity names came from. */
  evidence: {
    signals: number;
    corpusExamples: string[];
    entities: Array<{ name: string; count: number; source: 'corpus' | 'signals' }>;
  };
}

/** A candidate example for a shape thin in the corpus (public example format, partial gold). */
export interface MinedCandidateExample {
  shapeKey: string;
  signalId: string;
  example: IntentExample;
}

/** The result of {@link mineShapes} (JSON-ready). */
export interface MiningReport {
  signalsConsidered: number;
  /** Signals without `roles`/`behaviors`: no shape. */
  signalsWithoutShape: number;
  corpusConsidered: number;
  /** Corpus examples whose gold lacks an app type, roles or behaviours. */
  corpusWithoutShape: number;
  settings: MiningSettings;
  /** Frequent shapes that are missing in the library or thin in the corpus, most frequent first. */
  shapes: MinedShape[];
  candidatePatterns: MinedCandidatePattern[];
  candidateExamples: MinedCandidateExample[];
}

/** Inputs of {@link mineShapes}. */
export interface MiningInput {
  signals: Iterable<StoredSignal>;
  corpus: readonly IntentExample[];
  patterns: readonly Pattern[];
  settings?: Partial<MiningSettings>;
  /** Roles of known entity names, for pattern drafts. */
  roleIndex?: RoleIndex;
}

export interface ShapeState {
  shape: Shape;
  key: string;
  signals: number;
  corpusIds: string[];
  /** Normalised entity name → spelling, counts per source (records naming it) and gold roles. */
  entities: Map<string, { name: string; corpus: number; signals: number; roles: Map<string, number> }>;
  /** Distinct goals of signals, most recent first, at most examplesPerShape. */
  goals: Array<{ time: string; id: string; goal: string }>;
}

/** Most distinct record shapes per app type that enter the pairwise intersections. */
export const MAX_SHAPES_PER_APP_TYPE = 300;

/** Folds signals one at a time (memory bounded by the number of distinct shapes); `finish()` mines. */
export interface ShapeMiner {
  addSignal(signal: StoredSignal): void;
  finish(): MiningReport;
}

function intersect(left: Shape, right: Shape): Shape {
  return createShape(
    left.appType,
    left.roles.filter((role) => right.roles.includes(role)),
    left.behaviors.filter((behavior) => right.behaviors.includes(behavior)),
  );
}

function isCandidate(shape: Shape): boolean {
  return shape.roles.length >= 1 && shape.roles.length + shape.behaviors.length >= 2;
}

/** The folded shapes of one miner (see {@link createShapeMiner}). */
interface MinerState {
  input: Omit<MiningInput, 'signals'>;
  settings: MiningSettings;
  states: Map<string, ShapeState>;
  corpusWithoutShape: number;
  signalsConsidered: number;
  signalsWithoutShape: number;
}

/** A shape flagged missing in the library or thin in the corpus, with the record shapes containing it. */
interface Flagged {
  mined: MinedShape;
  supporters: ShapeState[];
}

/** Creates a shape miner over a corpus and a library (see {@link mineShapes}). */
export function createShapeMiner(input: Omit<MiningInput, 'signals'>): ShapeMiner {
  const miner: MinerState = {
    input,
    settings: { ...DEFAULT_SIGNALS_CONFIG.mining, ...input.settings },
    states: new Map(),
    corpusWithoutShape: 0,
    signalsConsidered: 0,
    signalsWithoutShape: 0,
  };
  for (const example of input.corpus) addExample(miner, example);
  return { addSignal: (signal) => addMinerSignal(miner, signal), finish: () => finishMining(miner) };
}

/** The record state of a shape, created empty on first sight. */
function stateOf(miner: MinerState, shape: Shape): ShapeState {
  const key = shapeKey(shape);
  let state = miner.states.get(key);
  if (state === undefined) {
    state = { shape, key, signals: 0, corpusIds: [], entities: new Map(), goals: [] };
    miner.states.set(key, state);
  }
  return state;
}

/** Counts each normalised entity name once per record, keeping its first spelling and its gold roles. */
function addEntities(
  state: ShapeState,
  entities: ReadonlyArray<{ name: string; role?: string | undefined }>,
  source: 'corpus' | 'signals',
): void {
  const seen = new Set<string>();
  for (const { name, role } of entities) {
    const key = normalizeEntityName(name);
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    let entry = state.entities.get(key);
    if (entry === undefined) {
      entry = { name, corpus: 0, signals: 0, roles: new Map() };
      state.entities.set(key, entry);
    }
    entry[source] += 1;
    if (role !== undefined) entry.roles.set(role, (entry.roles.get(role) ?? 0) + 1);
  }
}

function addExample(miner: MinerState, example: IntentExample): void {
  const shape = shapeOfExample(example);
  if (shape === undefined) {
    miner.corpusWithoutShape += 1;
    return;
  }
  const state = stateOf(miner, shape);
  state.corpusIds.push(example.id);
  addEntities(state, example.expected.entities ?? [], 'corpus');
}

function addMinerSignal(miner: MinerState, signal: StoredSignal): void {
  miner.signalsConsidered += 1;
  const shape = shapeOfSignal(signal);
  if (shape === undefined) {
    miner.signalsWithoutShape += 1;
    return;
  }
  const state = stateOf(miner, shape);
  state.signals += 1;
  addEntities(
    state,
    signal.uncoveredEntities.map((name) => ({ name })),
    'signals',
  );
  const limit = miner.settings.examplesPerShape;
  if (signal.goal !== null && limit > 0) keepGoal(state.goals, signal, limit);
}

function finishMining(miner: MinerState): MiningReport {
  const byAppType = new Map<string, ShapeState[]>();
  for (const state of miner.states.values())
    byAppType.set(state.shape.appType, [...(byAppType.get(state.shape.appType) ?? []), state]);
  const kept = mostSpecific(flagShapes(miner, candidateShapes(byAppType), byAppType));
  const shapes: MinedShape[] = [];
  const candidatePatterns: MinedCandidatePattern[] = [];
  const candidateExamples: MinedCandidateExample[] = [];
  for (const { mined, supporters } of kept) {
    shapes.push(mined);
    if (mined.library.status === 'missing') {
      const pattern = proposePattern(mined, supporters, miner.input.roleIndex);
      if (pattern !== undefined) candidatePatterns.push(pattern);
    }
    if (mined.thinInCorpus) candidateExamples.push(...examplesFor(mined, supporters, miner.settings.examplesPerShape));
  }
  return {
    signalsConsidered: miner.signalsConsidered,
    signalsWithoutShape: miner.signalsWithoutShape,
    corpusConsidered: miner.input.corpus.length,
    corpusWithoutShape: miner.corpusWithoutShape,
    settings: miner.settings,
    shapes,
    candidatePatterns,
    candidateExamples,
  };
}

/** Candidates: record shapes and the pairwise intersections of the most frequent ones per app type. */
function candidateShapes(byAppType: ReadonlyMap<string, ShapeState[]>): Map<string, Shape> {
  const candidates = new Map<string, Shape>();
  for (const group of byAppType.values()) {
    const ranked = [...group]
      .sort(
        (left, right) =>
          right.signals + right.corpusIds.length - (left.signals + left.corpusIds.length) ||
          (left.key < right.key ? -1 : 1),
      )
      .slice(0, MAX_SHAPES_PER_APP_TYPE);
    for (const state of group) if (isCandidate(state.shape)) candidates.set(state.key, state.shape);
    for (let left = 0; left < ranked.length; left += 1) {
      for (let right = left + 1; right < ranked.length; right += 1) {
        const core = intersect(ranked[left]!.shape, ranked[right]!.shape);
        if (isCandidate(core)) candidates.set(shapeKey(core), core);
      }
    }
  }
  return candidates;
}

/** Candidates with enough support that are missing in the library or thin in the corpus. */
function flagShapes(
  miner: MinerState,
  candidates: ReadonlyMap<string, Shape>,
  byAppType: ReadonlyMap<string, ShapeState[]>,
): Flagged[] {
  const { settings } = miner;
  const flagged: Flagged[] = [];
  for (const [key, shape] of candidates) {
    const supporters = (byAppType.get(shape.appType) ?? []).filter((state) => shapeContains(state.shape, shape));
    const signals = supporters.reduce((sum, state) => sum + state.signals, 0);
    const corpusExamples = supporters.reduce((sum, state) => sum + state.corpusIds.length, 0);
    if (signals < settings.minSupport && corpusExamples < settings.minSupport) continue;
    const library = libraryCoverage(shape, miner.input.patterns);
    const thinInCorpus = corpusExamples < settings.thinCorpusBelow;
    const reasons: MinedShape['reasons'] = [];
    if (library.status === 'missing') reasons.push('missing-in-library');
    if (thinInCorpus) reasons.push('thin-in-corpus');
    if (reasons.length === 0) continue;
    flagged.push({ mined: { ...shape, key, signals, corpusExamples, thinInCorpus, library, reasons }, supporters });
  }
  return flagged;
}

/** Most specific first: drops a shape when a flagged shape strictly containing it has its reasons too; most supported first. */
function mostSpecific(flagged: readonly Flagged[]): Flagged[] {
  const kept = flagged.filter(
    (entry) =>
      !flagged.some(
        (other) =>
          other !== entry &&
          other.mined.key !== entry.mined.key &&
          shapeContains(other.mined, entry.mined) &&
          entry.mined.reasons.every((reason) => other.mined.reasons.includes(reason)),
      ),
  );
  kept.sort(
    (left, right) =>
      Math.max(right.mined.signals, right.mined.corpusExamples) -
        Math.max(left.mined.signals, left.mined.corpusExamples) || (left.mined.key < right.mined.key ? -1 : 1),
  );
  return kept;
}

/** Candidate examples of a shape thin in the corpus, from the most recent goals of its supporters. */
function examplesFor(mined: MinedShape, supporters: readonly ShapeState[], limit: number): MinedCandidateExample[] {
  const goals: ShapeState['goals'] = [];
  for (const supporter of supporters)
    for (const goal of supporter.goals) keepGoal(goals, { ...goal, goal: goal.goal }, limit);
  const examples: MinedCandidateExample[] = [];
  for (const goal of goals) {
    const example = proposeExample(mined, goal);
    if (example !== undefined) examples.push({ shapeKey: mined.key, signalId: goal.id, example });
  }
  return examples;
}

/** Mines shapes (see the module comment). Pure: reads its inputs, changes nothing. */
export function mineShapes(input: MiningInput): MiningReport {
  const miner = createShapeMiner(input);
  for (const signal of input.signals) miner.addSignal(signal);
  return miner.finish();
}

function keepGoal(
  goals: ShapeState['goals'],
  signal: { time: string; id: string; goal: string | null },
  limit: number,
): void {
  if (signal.goal === null || limit <= 0 || goals.some((entry) => entry.goal === signal.goal)) return;
  goals.push({ time: signal.time, id: signal.id, goal: signal.goal });
  goals.sort((left, right) => Date.parse(right.time) - Date.parse(left.time) || (left.id < right.id ? -1 : 1));
  if (goals.length > limit) goals.length = limit;
}
