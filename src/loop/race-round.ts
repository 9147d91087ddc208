/**
 * The raced evaluate-and-integrate phase of a round (`gate.racing`): the
 * round's fresh candidates are evaluated on the optimization partition in
 * seeded batches shared by all of them (`src/gate/racing/`), against the
 * incumbent as it stands:
 *
 * - a candidate that breaks a mechanical constraint is refused before
 *   anything is paid for;
 * - after each batch, a candidate whose final test can no longer be expected
 *   to pass is stopped for **futility** and refused (`futility`);
 * - one significantly behind the leader is set aside (not refused) until the
 *   leader is decided;
 * - with `earlyAcceptance` on, a candidate that passes an interim look at
 *   the end of a complete repeat k (src/gate/sequential.ts) is complete on
 *   its first k repeats;
 * - a candidate whose every batch is in is *complete*: its anchors are
 *   evaluated and it is told to the gate (`LoopEngine.tell`), exactly as a
 *   screened candidate without racing — the shadow only when every earlier
 *   check passed;
 * - after an acceptance the others are rebased onto the new incumbent and
 *   raced again (their batches so far were of the old text).
 *
 * Every batch goes through the frozen evaluator, which stores each
 * example-repeat as it finishes: a resumed round races the same plan again
 * and pays only for what was never evaluated.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import { perExampleMeans } from '../evaluator/partition-score.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { GateCalibration, GateCheck, GateDecision } from '../gate/gate.ts';
import { optimizationLook } from '../gate/sequential.ts';
import {
  createRace,
  DEFAULT_EARLY_TEST,
  futilityDecision,
  planRace,
  raceSeed,
  runRace,
  type Race,
  type RaceEvidence,
  type RacePlan,
  type RaceSlot,
  type RacingSettings,
} from '../gate/racing/index.ts';
import { agreesWith } from '../gate/noise-free.ts';
import type { ExampleScoreRecord } from '../evaluator/partition-score.ts';
import type { Candidate } from '../proposers/proposer.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import type { LoadedStudy } from './loaded-study.ts';
import type { Told } from './engine.ts';
import { evaluateSlots } from './evaluate-partition.ts';
import { evaluateCandidatePartition, evaluateOptimizationAndAnchor } from './adaptive-evaluation.ts';
import type { Rebase } from './integrate.ts';
import { rebaseCandidate } from './integrate.ts';
import { withCallStage } from '../providers/call-stage.ts';

/** What the race needs of the engine's open round. */
export interface RaceRoundPort {
  study: LoadedStudy;
  /** The study's evaluator (it changes when the corpus does, between rounds only). */
  evaluator(): Evaluator;
  calibration: GateCalibration;
  round: number;
  /** The version the round's candidates were proposed against. */
  base: ArtifactVersion;
  settings: RacingSettings;
  signal?: AbortSignal;
  /** The incumbent as it stands now. */
  incumbent(): ArtifactVersion;
  /** True when the candidate was decided in this round already (a resumed round), by its identity (src/loop/candidate-id.ts). */
  isDecided(candidate: Candidate): boolean;
  budgetSpent(): boolean;
  /** The incumbent on the optimization partition with its repeats of this round (every example-repeat evaluated). */
  incumbentOptimization(): Promise<PartitionScore>;
  /** The incumbent's repeats in this round. */
  incumbentRepeats(): Promise<number>;
  /** The incumbent's noise-free reference values (adaptive repeats, src/loop/adaptive-evaluation.ts); empty maps when off. */
  references(): Promise<{ optimization: ReadonlyMap<string, number>; anchor: ReadonlyMap<string, number> }>;
  /** Records a candidate the incumbent already contains (skipped, duplicate). */
  recordContained(candidate: Candidate, proposedHash: string): Promise<Told>;
  /** Records a refusal made by the race (futility, or a constraint broken before evaluation). */
  refuse(input: {
    candidate: Candidate;
    text: string;
    rebase: Rebase;
    decision: GateDecision;
    racing?: RaceEvidence;
  }): Promise<Told>;
  /** Gates a complete candidate (the engine's `tell`). */
  tell(item: {
    candidate: Candidate;
    text: string;
    hash: string;
    optimization: PartitionScore;
    anchor: PartitionScore;
    racing: RaceEvidence;
  }): Promise<Told | null>;
}

interface RacedCandidate {
  /** The race's name for it: its position in the round and its text's hash. */
  key: string;
  candidate: Candidate;
  /** The text raced: the proposed text, or the rebased one. */
  text: string;
  rebase: Rebase;
}

/** Runs the round's race; returns every decision made, in order. */
export async function raceRound(port: RaceRoundPort, candidates: readonly Candidate[]): Promise<Told[]> {
  const { study } = port;
  const told: Told[] = [];
  const order = new Map(candidates.map((candidate, index) => [candidate, index]));
  const stopped = (): boolean => port.signal?.aborted === true || port.budgetSpent();
  const constraintsCheck = (text: string): GateCheck => raceConstraintsCheck(port, text);

  const prepare = (pending: readonly Candidate[]): Promise<RacedCandidate[]> =>
    prepareRaced(port, pending, { order, told, stopped });

  const pool = await prepare(candidates.filter((candidate) => !port.isDecided(candidate)));
  // Each raced text's repeat-0 draws (adaptive repeats: a noise-free example's agreeing draw stands for its other repeats).
  const firstDraws = new WeakMap<RacedCandidate, Map<string, ExampleScoreRecord>>();
  if (pool.length === 0) return told;
  const exampleIds = study.partitions.optimization.map((example) => example.id);
  const plan = planRace({
    exampleIds,
    repeats: study.gate.repeats,
    batchSize: port.settings.batchSize,
    seed: raceSeed(study.seed, port.round),
  });

  await runRace(pool, {
    concurrency: study.concurrency,
    stopped,
    start: (racing) => startRace(port, plan, exampleIds, racing),
    evaluateBatch: async (candidate, slots) => {
      const references = (await port.references()).optimization;
      return withCallStage('candidates', () =>
        evaluateAdaptiveSlots(port, candidate, slots, { references, firstDraws }),
      );
    },
    onFutile: async (candidate, evidence) => {
      if (stopped()) return false;
      const decision = futilityDecision(constraintsCheck(candidate.text), evidence);
      told.push(
        await port.refuse({
          candidate: candidate.candidate,
          text: candidate.text,
          rebase: candidate.rebase,
          decision,
          racing: evidence,
        }),
      );
      return !stopped();
    },
    onComplete: async (candidate, evidence) => {
      if (stopped()) return { accepted: false, proceed: false };
      const result = await tellComplete(port, candidate, evidence);
      if (result !== null) told.push(result);
      return { accepted: result?.decision === 'accepted', proceed: result !== null && !stopped() };
    },
    rebase: (remaining) => prepare(remaining.map((candidate) => candidate.candidate)),
    look: (candidate, request) => lookAt(port, candidate.text, request),
  });
  return told;
}

/**
 * Tells the gate a candidate whose race is complete (or passed early). Every optimization batch is
 * stored: this reads them (a noise-free example's agreeing draw standing for its other repeats, as
 * in the batches; the first k repeats after an early pass); the anchors are evaluated now, in full.
 */
async function tellComplete(
  port: RaceRoundPort,
  candidate: RacedCandidate,
  evidence: RaceEvidence,
): Promise<Told | null> {
  const { study } = port;
  const references = await port.references();
  const repeats =
    evidence.stop === 'early' ? (evidence.early?.looks.at(-1)?.repeats ?? study.gate.repeats) : study.gate.repeats;
  const { optimization, anchor } = await evaluateOptimizationAndAnchor(port.evaluator(), study, references, {
    text: candidate.text,
    signal: port.signal,
    repeats,
  });
  return port.tell({
    candidate: candidate.candidate,
    text: candidate.candidate.text,
    hash: contentHash(candidate.candidate.text),
    optimization,
    anchor,
    racing: evidence,
  });
}

/**
 * A race batch with adaptive repeats: the slots are evaluated (src/loop/evaluate-partition.ts
 * `evaluateSlots`), except a repeat ≥ 1 of an example with a reference value whose repeat-0
 * draw agreed with it: that draw is copied (src/gate/noise-free.ts).
 */
async function evaluateAdaptiveSlots(
  port: RaceRoundPort,
  candidate: RacedCandidate,
  slots: readonly RaceSlot[],
  adaptive: {
    references: ReadonlyMap<string, number>;
    firstDraws: WeakMap<RacedCandidate, Map<string, ExampleScoreRecord>>;
  },
): Promise<ExampleScoreRecord[]> {
  const evaluate = (some: readonly RaceSlot[]): Promise<ExampleScoreRecord[]> =>
    some.length === 0
      ? Promise.resolve([])
      : evaluateSlots(port.evaluator(), port.study, candidate.text, 'optimization', some, port.signal);
  const { references, firstDraws } = adaptive;
  const later = (slot: RaceSlot): boolean => slot.repeat >= 1 && references.has(slot.exampleId);

  const records = await evaluate(slots.filter((slot) => !later(slot)));
  const draws = firstDraws.get(candidate) ?? new Map<string, ExampleScoreRecord>();
  firstDraws.set(candidate, draws);
  for (const record of records) if (record.repeat === 0) draws.set(record.exampleId, record);
  const copies: ExampleScoreRecord[] = [];
  const rest: RaceSlot[] = [];
  for (const slot of slots.filter(later)) {
    const draw = draws.get(slot.exampleId);
    if (draw !== undefined && agreesWith(draw, references.get(slot.exampleId)))
      copies.push({ ...draw, repeat: slot.repeat });
    else rest.push(slot);
  }
  return [...records, ...(await evaluate(rest)), ...copies];
}

/** An interim look of early acceptance: the gate's margin and significance check on the candidate's first k repeats (stored: nothing is paid). */
async function lookAt(
  port: RaceRoundPort,
  text: string,
  request: { repeats: number; level: number },
): Promise<{ passed: boolean; pValue: number; delta: number; margin: number }> {
  const { study } = port;
  const references = await port.references();
  const candidate = await withCallStage('candidates', () =>
    evaluateCandidatePartition(port.evaluator(), study, references.optimization, {
      text,
      partition: 'optimization',
      signal: port.signal,
      repeats: request.repeats,
    }),
  );
  const look = optimizationLook(
    {
      optimization: { incumbent: await port.incumbentOptimization(), candidate },
      calibration: port.calibration,
      stochastic: !study.executor.deterministic,
      outcome: study.task.outcome ?? 'continuous',
    },
    study.gate,
    { level: request.level, test: port.settings.earlyTest ?? DEFAULT_EARLY_TEST },
  );
  return { passed: look.passed, pValue: look.pValue, delta: look.delta, margin: look.margin };
}

/** The constraints check of a raced candidate's text against the incumbent as it stands. */
function raceConstraintsCheck(port: RaceRoundPort, text: string): GateCheck {
  const result = port.study.constraints.check(port.incumbent().text, text);
  return {
    name: 'constraints',
    passed: result.passed,
    statistic: result.violations.length,
    threshold: 0,
    detail: result.passed
      ? 'every mechanical constraint holds'
      : result.violations.map((violation) => `${violation.constraint}: ${violation.message}`).join('; '),
  };
}

/** Starts the race of `racing` against the incumbent's optimization scores, with the gate's margin and α. */
async function startRace(
  port: RaceRoundPort,
  plan: RacePlan,
  exampleIds: readonly string[],
  racing: readonly RacedCandidate[],
): Promise<Race> {
  const { study } = port;
  const incumbent = await port.incumbentOptimization();
  const incumbentRepeats = incumbent.repeats;
  const candidateRepeats = study.gate.repeats;
  const noiseSd = port.calibration.noiseSd;
  const margin = study.gate.thresholdK * noiseSd * Math.sqrt(1 / candidateRepeats + 1 / incumbentRepeats);
  return createRace({
    plan,
    settings: port.settings,
    incumbentMeans: perExampleMeans(incumbent),
    keys: racing.map((candidate) => candidate.key),
    context: {
      pairVarianceFloor: exampleIds.length * noiseSd ** 2,
      runNoiseSd: noiseSd,
      candidateRepeats,
      incumbentRepeats,
      margin,
      alpha: study.gate.alpha,
      stochastic: !study.executor.deterministic,
    },
  });
}

/** Rebases candidates onto the incumbent as it stands; records those it contains and those that break a constraint (in `round.told`). */
async function prepareRaced(
  port: RaceRoundPort,
  pending: readonly Candidate[],
  round: { order: ReadonlyMap<Candidate, number>; told: Told[]; stopped: () => boolean },
): Promise<RacedCandidate[]> {
  const { order, told, stopped } = round;
  const constraintsCheck = (text: string): GateCheck => raceConstraintsCheck(port, text);
  const ready: RacedCandidate[] = [];
  for (const candidate of pending) {
    if (stopped()) break;
    const rebase = rebaseCandidate(candidate, port.base, port.incumbent());
    if (rebase.kind === 'contained') {
      told.push(await port.recordContained(candidate, contentHash(candidate.text)));
      continue;
    }
    const text = rebase.kind === 'rebased' ? rebase.text : candidate.text;
    const constraints = constraintsCheck(text);
    if (!constraints.passed) {
      // Refused before anything is paid for (the gate would refuse it first too).
      told.push(
        await port.refuse({
          candidate,
          text,
          rebase,
          decision: { accepted: false, reason: 'constraint', checks: [constraints], shadowConsulted: false },
        }),
      );
      continue;
    }
    ready.push({ key: `${order.get(candidate) ?? 0}:${contentHash(text)}`, candidate, text, rebase });
  }
  return ready;
}
