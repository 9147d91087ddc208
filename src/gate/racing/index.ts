/**
 * Racing: sequential evaluation of a round's candidates in seeded batches,
 * with a futility stop and an anytime-valid comparison between candidates.
 * See docs/gate.md ("Racing") and the modules: `race-plan.ts` (the batches),
 * `futility.ts` (when to stop), `race.ts` (the race state), `decide-raced.ts`
 * (the refusal and its evidence).
 *
 * @module
 */
export { planRace, raceSeed, slotKey, type RacePlan, type RaceSlot } from './race-plan.ts';
export {
  assessFutility,
  type FutilityAssessment,
  type FutilityContext,
  type FutilityReason,
  type RacingSettings,
} from './futility.ts';
export {
  createRace,
  entryOf,
  isIdle,
  nextBatch,
  observe,
  raceEvidence,
  settle,
  verdicts,
  type Race,
  type RaceEntry,
  type RaceEvidence,
  type RaceStatus,
  type RaceStep,
} from './race.ts';
export {
  completeRepeats,
  DEFAULT_EARLY_TEST,
  dueLook,
  recordLook,
  sequentialJudgementOf,
  type EarlyEvidence,
} from './early-looks.ts';
export { describeRace, futilityDecision, racingCheck } from './decide-raced.ts';
export { runRace, type RaceCallbacks } from './run-race.ts';
export { raceShadow, shadowFutilityContext, shadowStop, type ShadowRaceOutcome } from './shadow-race.ts';
