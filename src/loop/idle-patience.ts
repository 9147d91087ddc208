/**
 * Stamina: how long the loop keeps asking a proposer whose answers bring
 * nothing new (issue 34, item 3). See {@link idlePatience}.
 *
 * @module
 */

/**
 * Rounds' worth of budget left per extra idle ask: patience grows by one ask
 * for every `IDLE_PATIENCE_ROUNDS × candidatesPerRound` experiments left.
 * 2 (was 5): on bench:llm-loop's `fewer-good` world a run whose proposer
 * draws its lines at random stopped idle with half its budget left and a
 * good line never offered; three more asks (one proposer call each) offered it.
 */
export const IDLE_PATIENCE_ROUNDS = 2;

/**
 * The stamina rule: how many idle asks in a row (answers with nothing new
 * to evaluate) stop the run as `no_new_proposals`. It scales with the budget
 * left, patience = `stopping.idleRounds` + ⌊experiments left /
 * ({@link IDLE_PATIENCE_ROUNDS} × candidatesPerRound)⌋: an idle ask costs one
 * proposer call, a judged candidate far more, so a run with much budget
 * left asks a few more times before it gives up. Each ask after an idle one
 * draws a fresh sample (the proposer's seed moves with the round and the
 * attempt) and names the candidates the last answer repeated
 * (`ProposalContext.repeatedDeltas`).
 */
export function idlePatience(idleRounds: number, experimentsLeft: number, candidatesPerRound: number): number {
  return (
    idleRounds + Math.floor(Math.max(0, experimentsLeft) / (IDLE_PATIENCE_ROUNDS * Math.max(1, candidatesPerRound)))
  );
}
