/**
 * The decide state of the engine: a decision recorded in the notebook, the
 * round's counts and the run's streaks updated, the decision emitted. Also
 * the identity of a round's candidates and the levels of a re-trial.
 *
 * @module
 */
import type { GateDecision } from '../gate/gate.ts';
import type { Candidate } from '../proposers/proposer.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import type { Told } from './engine.ts';
import type { EngineRun, RoundState } from './engine-state.ts';
import { changeOf } from './integrate.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { legacyDecisionKey, recordExperiment } from './notebook.ts';
import { DEFAULT_RETRIALS, retrialSettings } from './retrials.ts';

/** Records one experiment of the open round (src/loop/notebook.ts) and counts it when it was evaluated. */
export async function recordDecision(
  run: EngineRun,
  input: {
    base: ArtifactVersion;
    hash: string;
    candidate: Candidate;
    candidateId: string;
    decision: GateDecision;
    skipped?: boolean;
    extraEvidence?: Record<string, unknown>;
  },
): Promise<{ id: number; accepted?: ArtifactVersion }> {
  const result = await recordExperiment(run.notebook, {
    ...input,
    change: changeOf(input.base.text, input.candidate.text),
    runId: run.runId,
    round: run.current!.round,
    proposer: run.study.proposer.id,
    fingerprint: run.evaluator.fingerprint,
    seed: run.study.seed,
    now: run.now,
    shadowIds: run.study.partitions.shadow.map((example) => example.id),
  });
  // Evaluated and decided (RunOutcome.newExperiments): a skipped duplicate is recorded but was never judged.
  if (input.skipped !== true) run.newExperiments += 1;
  return result;
}

/**
 * The identity of one of the round's candidates: the object `ask` returned,
 * or (a caller that copied it) the first of the round's candidates with
 * the same text and delta.
 */
export function idOf(state: RoundState, candidate: Candidate): string {
  const own = state.ids.get(candidate);
  if (own !== undefined) return own;
  for (const [known, id] of state.ids) if (known.text === candidate.text && known.delta === candidate.delta) return id;
  throw new Error(`the candidate "${candidate.delta.slice(0, 80)}" is not one the open round's ask() returned`);
}
/** True when the candidate was decided in this round already (before a crash): by identity, or for a row older than identities, by delta. */
export function isDecided(state: RoundState, candidate: Candidate): boolean {
  return state.decided.has(idOf(state, candidate)) || state.decided.has(legacyDecisionKey(candidate.delta));
}

/**
 * A re-trial's gate levels: α/K and shadowAlpha/K (src/loop/retrials.ts), and on the incumbent it was judged
 * on before, `repeatsFactor` × `gate.repeats`; the configured ones for a first trial.
 */
export function gateSettingsFor(run: EngineRun, state: RoundState, candidate: Candidate): LoadedStudy['gate'] {
  const retrial = state.retrials.get(candidate);
  return retrial === undefined
    ? run.study.gate
    : retrialSettings(
        run.study.gate,
        retrial.trial,
        run.study.gate.retrials ?? DEFAULT_RETRIALS,
        retrial.repeatsFactor,
      );
}

/** The study as a candidate is judged in it: the study itself, or with a re-trial's gate settings (levels, repeats). */
export function studyFor(run: EngineRun, state: RoundState, candidate: Candidate): LoadedStudy {
  const settings = gateSettingsFor(run, state, candidate);
  return settings === run.study.gate ? run.study : { ...run.study, gate: settings };
}

/** True for a re-trial on the incumbent it was judged on before: judged with more repeats, outside the race. */
export function deepensRepeats(state: RoundState, candidate: Candidate): boolean {
  return (state.retrials.get(candidate)?.repeatsFactor ?? 1) > 1;
}

/** The evidence of a re-trial: its number, the experiments before it and the levels (and repeats) it was judged at. */
export function retrialEvidence(run: EngineRun, state: RoundState, candidate: Candidate): Record<string, unknown> {
  const retrial = state.retrials.get(candidate);
  if (retrial === undefined) return {};
  const settings = gateSettingsFor(run, state, candidate);
  return {
    retrial: {
      ...retrial,
      alpha: settings.alpha,
      shadowAlpha: settings.shadowAlpha,
      ...(retrial.repeatsFactor !== undefined ? { repeats: settings.repeats } : {}),
    },
  };
}

/** Records a candidate whose change the incumbent already contains (merged earlier this round): skipped, as a duplicate. */
export async function recordContained(
  run: EngineRun,
  state: RoundState,
  candidate: Candidate,
  proposedHash: string,
): Promise<Told> {
  const candidateId = idOf(state, candidate);
  const { id } = await recordDecision(run, {
    base: run.incumbent,
    hash: proposedHash,
    candidate,
    candidateId,
    decision: {
      accepted: false,
      reason: 'duplicate',
      checks: [
        {
          name: 'diversity',
          passed: false,
          statistic: 0,
          threshold: run.study.gate.minDeltaDistance,
          detail: 'the incumbent already contains this change (merged earlier this round)',
        },
      ],
      shadowConsulted: false,
    },
  });
  state.decided.set(candidateId, { decision: 'skipped', candidate_hash: proposedHash });
  run.emit({
    type: 'decision',
    round: state.round,
    experimentId: id,
    delta: candidate.delta,
    decision: 'skipped',
    reason: 'duplicate',
    optimization: null,
    rebased: true,
  });
  return {
    experimentId: id,
    decision: 'skipped',
    reason: 'duplicate',
    text: candidate.text,
    optimization: null,
    rebased: true,
  };
}

/** Records one decision of the round (told or raced) and updates the round's counts and the run's streaks. */
export async function conclude(
  run: EngineRun,
  state: RoundState,
  input: {
    candidate: Candidate;
    text: string;
    hash: string;
    decision: GateDecision;
    extraEvidence: Record<string, unknown>;
    optimization: number | null;
    rebased: boolean;
  },
): Promise<Told> {
  const { decision, text, hash } = input;
  const candidateId = idOf(state, input.candidate);
  const result = await recordDecision(run, {
    base: run.incumbent,
    hash,
    candidate: { ...input.candidate, text },
    candidateId,
    decision,
    extraEvidence: input.extraEvidence,
  });
  if (result.accepted !== undefined) run.incumbent = result.accepted;
  run.evaluatedCount += 1;
  run.proposalAttempts += 1;
  state.decidedAny = true;
  state.decided.set(candidateId, { decision: decision.accepted ? 'accepted' : 'refused', candidate_hash: hash });
  if (decision.accepted) state.accepted += 1;
  else state.refused += 1;
  if (!decision.accepted && decision.reason === 'evaluation_failed') {
    run.consecutiveFailures += 1;
    run.proposalFailures += 1;
    run.evaluationFailures += 1;
    run.lastEvaluationFailure = decision.checks.find((check) => check.name === 'evaluation')?.detail ?? '';
    run.lastFailure = run.lastEvaluationFailure;
  } else {
    run.consecutiveFailures = 0;
    run.evaluationFailures = 0;
  }
  const reason = decision.accepted ? 'accepted' : decision.reason;
  run.emit({
    type: 'decision',
    round: state.round,
    experimentId: result.id,
    delta: input.candidate.delta,
    decision: decision.accepted ? 'accepted' : 'refused',
    reason,
    optimization: input.optimization,
    ...(input.rebased ? { rebased: true } : {}),
  });
  return {
    experimentId: result.id,
    decision: decision.accepted ? 'accepted' : 'refused',
    reason,
    text,
    optimization: input.optimization,
    rebased: input.rebased,
    gate: decision,
  };
}
