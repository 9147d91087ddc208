/**
 * The decision of a candidate the race stopped for futility: a refusal
 * (`futility`) whose evidence says what was evaluated, why it stopped, the
 * predictive power and the anytime-valid bound. A candidate the race did not
 * stop is decided by the gate (`decide`) on its full evaluation, as without
 * racing; its race evidence is stored beside the gate's checks.
 *
 * @module
 */
import type { GateCheck, GateDecision } from '../gate.ts';
import type { RaceEvidence } from './race.ts';

const round = (value: number): number => Math.round(value * 1e6) / 1e6;

/** One sentence on a raced evaluation, for reports. */
export function describeRace(evidence: RaceEvidence): string {
  const evaluated = `${evidence.evaluated} of ${evidence.planned} example-repeats (${evidence.batches} of ${evidence.of} batches of ${evidence.batchSize}; ${evidence.examples} examples, ${evidence.repeats} repeat(s))`;
  const bound = `anytime-valid bound on Δ at α = ${evidence.bound.alpha}: [${round(evidence.bound.lower)}, ${round(evidence.bound.upper)}]`;
  if (evidence.stop === 'complete') return `raced in full: ${evaluated}; Δ = ${round(evidence.delta)}, ${bound}`;
  const why =
    evidence.rule === 'bound'
      ? `the bound lies below the margin ${round(evidence.margin)}`
      : `predictive power of the final test ${round(evidence.predictivePower)} < futilityLevel ${evidence.futilityLevel} (the gate needs Δ > ${round(evidence.critical)})`;
  return `stopped for futility after ${evaluated}: Δ = ${round(evidence.delta)}; ${why}; ${bound}`;
}

/** The racing check of a decision. */
export function racingCheck(evidence: RaceEvidence): GateCheck {
  const byBound = evidence.rule === 'bound';
  return {
    name: 'racing',
    passed: evidence.stop === 'complete',
    statistic: round(byBound ? evidence.bound.upper : evidence.predictivePower),
    threshold: round(byBound ? evidence.margin : evidence.futilityLevel),
    detail: describeRace(evidence),
    data: { ...evidence },
  };
}

/**
 * The refusal of a candidate stopped for futility.
 *
 * @param constraints the constraints check (passed: a candidate that breaks a constraint is refused before it is evaluated)
 */
export function futilityDecision(constraints: GateCheck, evidence: RaceEvidence): GateDecision {
  return { accepted: false, reason: 'futility', checks: [constraints, racingCheck(evidence)], shadowConsulted: false };
}
