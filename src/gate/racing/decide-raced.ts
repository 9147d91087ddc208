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
  const looks = looksText(evidence);
  if (evidence.stop === 'complete')
    return `raced in full: ${evaluated}; Δ = ${round(evidence.delta)}, ${bound}${looks}`;
  if (evidence.stop === 'early')
    return `accepted early on optimization after ${evaluated}: Δ = ${round(evidence.delta)}, ${bound}${looks}`;
  const why =
    evidence.rule === 'bound'
      ? `the bound lies below the margin ${round(evidence.margin)}`
      : `predictive power of the final test ${round(evidence.predictivePower)} < futilityLevel ${evidence.futilityLevel} (the gate needs Δ > ${round(evidence.critical)})`;
  return `stopped for futility after ${evaluated}: Δ = ${round(evidence.delta)}; ${why}; ${bound}`;
}

/** The looks of early acceptance, for reports: `; looks (O'Brien–Fleming): k = 2 of 5 at 0.00194, p = 0.2 …`, or '' when it is off. */
export function looksText(evidence: RaceEvidence): string {
  const early = evidence.early;
  if (early === undefined) return '';
  const looks = early.looks.map(
    (look) =>
      `k = ${look.repeats} of ${look.of} at ${round(look.level)}: p = ${round(look.pValue)}, Δ = ${round(look.delta)} (margin ${round(look.margin)}) ${look.passed ? 'passed' : 'not passed'}`,
  );
  const spent = `spent ${round(early.spent)} of α = ${early.alpha}, the final look at ${round(Math.max(0, early.alpha - early.spent))}`;
  return `; early acceptance (${early.rule}, ${early.test}): ${looks.length === 0 ? 'no look taken' : looks.join('; ')}; ${spent}`;
}

/** The racing check of a decision. */
export function racingCheck(evidence: RaceEvidence): GateCheck {
  const byBound = evidence.rule === 'bound';
  return {
    name: 'racing',
    passed: evidence.stop !== 'futility',
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
