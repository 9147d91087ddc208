/**
 * The screen and integrate states of the engine: fresh candidates evaluated
 * on optimization and anchor; then one at a time, rebased onto the incumbent
 * as it now stands, gated and recorded (or raced: src/loop/race-round.ts).
 *
 * @module
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { GateCheck, GateDecision } from '../gate/gate.ts';
import { raceSeed, racingCheck, sequentialJudgementOf } from '../gate/racing/index.ts';
import type { Candidate } from '../proposers/proposer.ts';
import type { Told } from './engine.ts';
import {
  conclude,
  deepensRepeats,
  gateSettingsFor,
  isDecided,
  recordContained,
  retrialEvidence,
  studyFor,
} from './engine-decide.ts';
import { candidateReferences, evaluateIncumbent, repeatsOfIncumbent } from './engine-incumbent.ts';
import { adaptiveRepeatsOn, evaluateOptimizationAndAnchor } from './adaptive-evaluation.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { EngineRun } from './engine-state.ts';
import { enterPhase } from './engine-state.ts';
import type { Rebase, ScreenedCandidate } from './integrate.ts';
import { evaluationFailure, gateCandidate, rebaseCandidate, scorerFailure, screenCandidates } from './integrate.ts';
import { raceRound } from './race-round.ts';

/**
 * Screens candidates of the open round: optimization and anchor,
 * `proposer.concurrency` at a time; best first, then each re-trial on the
 * incumbent it was judged on before, with its own (larger) repeats
 * (src/loop/retrials.ts). Screened, the round moves to `decide`
 * (src/loop/open-round-state.ts).
 */
export async function screen(run: EngineRun, candidates: readonly Candidate[]): Promise<ScreenedCandidate[]> {
  const state = run.current;
  const references = state === null ? undefined : await candidateReferences(run, state.round);
  const deeper = state === null ? [] : candidates.filter((candidate) => deepensRepeats(state, candidate));
  const plain = candidates.filter((candidate) => !deeper.includes(candidate));
  const screened = await screenCandidates(run.evaluator, run.study, plain, run.options.signal, references);
  for (const candidate of deeper) {
    const study = studyFor(run, state!, candidate);
    screened.push(...(await screenCandidates(run.evaluator, study, [candidate], run.options.signal, references)));
  }
  await enterPhase(run, 'decide');
  return screened;
}

/** A rebased candidate's optimization and anchor scores on its new text (adaptive repeats; the first k repeats after an early pass). */
async function evaluateRebased(
  run: EngineRun,
  round: number,
  item: ScreenedCandidate,
  text: string,
  study: EngineRun['study'],
): Promise<{ optimization: PartitionScore; anchor: PartitionScore }> {
  // Accepted early by the race: its first k repeats (stored), not the full plan.
  const repeats = item.racing?.stop === 'early' ? item.optimization.repeats : study.gate.repeats;
  return evaluateOptimizationAndAnchor(run.evaluator, study, await candidateReferences(run, round), {
    text,
    signal: run.options.signal,
    repeats,
  });
}

/** Gates one screened candidate against the incumbent as it stands, and records the decision (see LoopEngine.tell). */
export async function tellCandidate(run: EngineRun, item: ScreenedCandidate): Promise<Told | null> {
  if (run.current === null) throw new Error('tell() needs an open round with asked candidates');
  const state = run.current;
  if (run.options.signal?.aborted) return null;
  if (isDecided(state, item.candidate)) return null; // decided before a crash: never decide twice
  // Checked before deciding, not only after: a round resumed after a crash that followed its
  // last allowed decision must not decide one more.
  if (run.evaluatedCount >= run.study.stopping.maxExperiments) return null;
  let text = item.text;
  let optimization = item.optimization;
  let anchor = item.anchor;
  const rebase = rebaseCandidate(item.candidate, state.base, run.incumbent);
  if (rebase.kind === 'contained') return recordContained(run, state, item.candidate, item.hash);
  const settings = gateSettingsFor(run, state, item.candidate);
  const sequential = item.racing !== undefined ? sequentialJudgementOf(item.racing, settings.alpha) : undefined;
  if (rebase.kind === 'rebased') {
    text = rebase.text;
    ({ optimization, anchor } = await evaluateRebased(
      run,
      state.round,
      item,
      text,
      studyFor(run, state, item.candidate),
    ));
  }
  const hash = contentHash(text);
  const rebaseEvidence = { ...rebaseEvidenceOf(rebase, item.hash), ...retrialEvidence(run, state, item.candidate) };
  const racingEvidence = item.racing !== undefined ? { racing: item.racing } : {};
  run.candidateFailures.observe(optimization);
  const failure = evaluationFailure([optimization, anchor]) ?? scorerFailure([optimization, anchor]);
  let decision: GateDecision;
  let extraEvidence: Record<string, unknown> = { ...rebaseEvidence, ...racingEvidence };
  if (failure !== undefined) {
    decision = failure;
  } else {
    const repeats = await repeatsOfIncumbent(run, state.round);
    await evaluateIncumbent(run, 'optimization', repeats);
    await evaluateIncumbent(run, 'anchor', repeats);
    const gated = await gateCandidate({
      evaluator: run.evaluator,
      study: studyFor(run, state, item.candidate),
      incumbent: run.incumbent,
      incumbentRepeats: repeats,
      text,
      optimization,
      anchor,
      calibration: run.calibration,
      settings,
      ...(sequential !== undefined ? { sequential } : {}),
      ...(run.options.signal !== undefined ? { signal: run.options.signal } : {}),
      ...(run.study.gate.racing !== undefined
        ? { racing: { settings: run.study.gate.racing, seed: raceSeed(run.study.seed, state.round) ^ 0x5bd1e995 } }
        : {}),
    });
    decision = gated.decision;
    extraEvidence = {
      ...rebaseEvidence,
      scores: gated.scores,
      ...racingEvidence,
      ...adaptiveEvidence(run, [optimization, anchor], gated.incumbentScores),
    };
  }
  if (item.racing !== undefined) decision = withRacingCheck(decision, racingCheck(item.racing));
  return conclude(run, state, {
    candidate: item.candidate,
    text,
    hash,
    decision,
    extraEvidence,
    optimization: optimization.composite,
    rebased: rebase.kind === 'rebased',
  });
}

/**
 * `adaptiveRepeats` in a decision's evidence when the rule is on: the
 * example-repeats copied from a noise-free example's one draw instead of
 * evaluated — the candidate's (optimization, anchor) and the incumbent's
 * skipped top-ups (optimization, anchor, shadow when consulted).
 */
function adaptiveEvidence(
  run: EngineRun,
  candidate: readonly PartitionScore[],
  incumbent: readonly PartitionScore[],
): { adaptiveRepeats?: { copied: { candidate: number; incumbent: number } } } {
  if (!adaptiveRepeatsOn(run.study, run.calibration)) return {};
  const copied = (scores: readonly PartitionScore[]): number =>
    scores.reduce((sum, score) => sum + (score.copied ?? 0), 0);
  return { adaptiveRepeats: { copied: { candidate: copied(candidate), incumbent: copied(incumbent) } } };
}

/** Races the fresh candidates of the open round (see LoopEngine.race). */
export async function race(run: EngineRun, candidates: readonly Candidate[]): Promise<Told[]> {
  if (run.current === null) throw new Error('race() needs an open round with asked candidates');
  const state = run.current;
  const racing = run.study.gate.racing;
  if (racing === undefined) throw new Error('race() needs gate.racing settings');
  // A race screens and decides together: the round is at decide from its start.
  await enterPhase(run, 'decide');
  let references: { id: number; value: ReturnType<typeof candidateReferences> } | undefined;
  const told = await raceRound(
    {
      study: run.study,
      evaluator: () => run.evaluator,
      calibration: run.calibration,
      round: state.round,
      base: state.base,
      settings: racing,
      ...(run.options.signal !== undefined ? { signal: run.options.signal } : {}),
      incumbent: () => run.incumbent,
      isDecided: (candidate) => isDecided(state, candidate),
      budgetSpent: () => run.evaluatedCount >= run.study.stopping.maxExperiments,
      incumbentOptimization: async () =>
        evaluateIncumbent(run, 'optimization', await repeatsOfIncumbent(run, state.round)),
      incumbentRepeats: () => repeatsOfIncumbent(run, state.round),
      references: () => {
        // One reading per incumbent (it changes when a raced candidate is accepted).
        if (references?.id !== run.incumbent.id)
          references = { id: run.incumbent.id, value: candidateReferences(run, state.round) };
        return references.value;
      },
      recordContained: (candidate, hash) => recordContained(run, state, candidate, hash),
      refuse: (input) =>
        conclude(run, state, {
          candidate: input.candidate,
          text: input.text,
          hash: contentHash(input.text),
          decision: input.decision,
          extraEvidence: {
            ...rebaseEvidenceOf(input.rebase, contentHash(input.candidate.text)),
            ...retrialEvidence(run, state, input.candidate),
            racing: input.racing,
          },
          optimization: null,
          rebased: input.rebase.kind === 'rebased',
        }),
      tell: (item) => tellCandidate(run, item),
    },
    candidates.filter((candidate) => !deepensRepeats(state, candidate)),
  );
  // Re-trials on the incumbent they were judged on: more repeats than the race's plan, so screened and told apart.
  for (const candidate of candidates.filter((item) => deepensRepeats(state, item))) {
    if (run.options.signal?.aborted || run.evaluatedCount >= run.study.stopping.maxExperiments) break;
    if (isDecided(state, candidate)) continue;
    const [item] = await screen(run, [candidate]);
    const result = item === undefined ? null : await tellCandidate(run, item);
    if (result !== null) told.push(result);
  }
  return told;
}

/** The decision with the race's check after the constraints (what was evaluated before the gate looked). */
function withRacingCheck(decision: GateDecision, check: GateCheck): GateDecision {
  const at = decision.checks.findIndex((entry) => entry.name === 'constraints') + 1;
  return { ...decision, checks: [...decision.checks.slice(0, at), check, ...decision.checks.slice(at)] };
}

/** The evidence of a rebase, as stored with the decision. */
function rebaseEvidenceOf(rebase: Rebase, proposedHash: string): Record<string, unknown> {
  return rebase.kind === 'rebased'
    ? { rebased: { method: rebase.method, conflicts: rebase.conflicts, proposedHash } }
    : {};
}
