/**
 * Spending caps: a usage meter shared by every model call of a run, and the
 * pre-run check that the budget covers at least a few full proposals
 * (DESIGN.md §6: "before a run, check that the budget allows at least a few
 * full proposals").
 *
 * Caps (`maxCostUsd`, `maxTokens`) are checked before each paid call: a call
 * whose estimated input alone would take the total past a cap is not made and
 * {@link BudgetExceededError} is thrown instead. A configured 0 means 0: with
 * `maxCostUsd: 0` no priced call is made (a model that costs 0 may still run).
 * Calls already in flight finish and are counted, so the total can pass a cap
 * by at most the calls in flight.
 */
import { hasErrorMarker, InfrastructureError, InputError } from '../errors.ts';
import type { ExecutionUsage } from './usage.ts';
import type { CallStage } from './call-stage.ts';
import { currentCallStage, emptyCallsByStage } from './call-stage.ts';
import type { ModelPrice } from './prices.ts';
import { costUsd, estimateTokens } from './prices.ts';

const BUDGET_EXCEEDED_ERROR = Symbol.for('kloop.error.budget');

/**
 * The run's spending cap was reached. `code` is `budget`; not retryable. The
 * study loop should stop with the stop reason `budget`.
 */
export class BudgetExceededError extends InfrastructureError {
  readonly [BUDGET_EXCEEDED_ERROR] = true;

  constructor(message: string) {
    super(message, { code: 'budget', isRetryable: false });
  }

  /** True when `value` is a {@link BudgetExceededError}, of any copy of kloop (a marker, src/errors.ts). */
  static override isInstance(value: unknown): value is BudgetExceededError {
    return hasErrorMarker(value, BUDGET_EXCEEDED_ERROR);
  }
}

/** Spending caps of a run. Absent = no cap. */
export interface BudgetLimits {
  /** Most USD to spend, at the prices of `prices.ts`. */
  maxCostUsd?: number;
  /** Most tokens (input + output) to spend. */
  maxTokens?: number;
}

/** Totals of a meter. */
export interface UsageTotals extends ExecutionUsage {
  /** Model calls made (cache hits excluded). */
  calls: number;
  /** Answers served from the response cache. */
  cachedCalls: number;
  /** Model calls made (cache hits excluded) by the stage they were made for (src/providers/call-stage.ts); they sum to `calls`. */
  callsByStage: Record<CallStage, number>;
}

/** Counts usage and enforces the caps. One per run, shared by executor and proposer. */
export interface UsageMeter {
  readonly limits: Readonly<BudgetLimits>;
  /**
   * Throws {@link BudgetExceededError} when a call with this estimated input
   * would take the total past a cap.
   */
  assertCanSpend(estimatedInputTokens: number, price: ModelPrice): void;
  /** Adds the usage of a finished call (cached answers: `cached` true, zero usage). */
  record(usage: ExecutionUsage, cached?: boolean): void;
  totals(): UsageTotals;
}

/** Creates a {@link UsageMeter}. */
export function createUsageMeter(limits: BudgetLimits = {}): UsageMeter {
  const totals: UsageTotals = {
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    calls: 0,
    cachedCalls: 0,
    callsByStage: emptyCallsByStage(),
  };
  return {
    limits,
    assertCanSpend(estimatedInputTokens, price) {
      const tokens = totals.inputTokens + totals.outputTokens;
      if (limits.maxTokens !== undefined && tokens + estimatedInputTokens > limits.maxTokens) {
        throw new BudgetExceededError(
          `token budget reached: ${tokens} tokens spent, the next call needs about ${estimatedInputTokens} more (maxTokens ${limits.maxTokens})`,
        );
      }
      const estimatedCost = costUsd(price, estimatedInputTokens, 0);
      if (limits.maxCostUsd !== undefined && totals.costUsd + estimatedCost > limits.maxCostUsd) {
        throw new BudgetExceededError(
          `cost budget reached: $${totals.costUsd.toFixed(4)} spent, the next call costs at least $${estimatedCost.toFixed(4)} (maxCostUsd $${limits.maxCostUsd})`,
        );
      }
    },
    record(usage, cached = false) {
      if (cached) {
        totals.cachedCalls += 1;
        return;
      }
      totals.calls += 1;
      totals.callsByStage[currentCallStage()] += 1;
      totals.inputTokens += usage.inputTokens;
      totals.outputTokens += usage.outputTokens;
      totals.costUsd += usage.costUsd;
    },
    totals: () => ({ ...totals, callsByStage: { ...totals.callsByStage } }),
  };
}

/** What one full proposal costs: a proposer call plus evaluating one candidate on optimization and anchor. */
export interface ProposalCostInput {
  executorPrice: ModelPrice;
  proposerPrice: ModelPrice;
  /** Characters of the artifact (the executor's system prompt), output contract included. */
  executorSystemCharacters: number;
  /** Characters of each goal the candidate is evaluated on (optimization + anchor examples). */
  goalCharacters: readonly number[];
  /** Evaluation repeats. */
  repeats: number;
  /** Expected output tokens of one execution (an intent answer). */
  executorOutputTokens: number;
  /** Characters of the proposer's prompt (incumbent, program, diagnostics, history). */
  proposerInputCharacters: number;
  /** Expected output tokens of one proposer call. */
  proposerOutputTokens: number;
}

/** An estimate of one full proposal. */
export interface ProposalCostEstimate {
  inputTokens: number;
  outputTokens: number;
  tokens: number;
  costUsd: number;
}

/**
 * Estimates the cost of one full proposal (tokens ≈ characters / 4).
 */
export function estimateProposalCost(input: ProposalCostInput): ProposalCostEstimate {
  const executions = input.goalCharacters.length * Math.max(1, input.repeats);
  const executorInput =
    input.goalCharacters.reduce((sum, goal) => sum + estimateTokens(input.executorSystemCharacters + goal), 0) *
    Math.max(1, input.repeats);
  const executorOutput = executions * input.executorOutputTokens;
  const proposerInput = estimateTokens(input.proposerInputCharacters);
  const proposerOutput = input.proposerOutputTokens;
  const cost =
    costUsd(input.executorPrice, executorInput, executorOutput) +
    costUsd(input.proposerPrice, proposerInput, proposerOutput);
  return {
    inputTokens: executorInput + proposerInput,
    outputTokens: executorOutput + proposerOutput,
    tokens: executorInput + proposerInput + executorOutput + proposerOutput,
    costUsd: cost,
  };
}

/** How many proposals a budget covers, with the estimate behind it. */
export interface BudgetCoverage {
  /** Full proposals the budget covers (Infinity without caps). */
  proposalsCovered: number;
  estimate: ProposalCostEstimate;
  message: string;
}

/** Fewest full proposals a run must be able to pay for. */
export const MINIMUM_PROPOSALS = 3;

/**
 * Checks, before a run starts, that the budget covers at least
 * `minimumProposals` (default 3) full proposals.
 *
 * @param limits the run's caps
 * @param estimate one full proposal ({@link estimateProposalCost})
 * @param spent what this run has already spent (default nothing)
 * @returns the coverage when it is enough
 * @throws InputError (code `input.budget`) when the budget covers fewer proposals, saying how many and what one costs
 * @example
 * ```ts
 * checkBudgetCoversProposals({ maxCostUsd: 0.01 }, { inputTokens: 9000, outputTokens: 3000, tokens: 12000, costUsd: 0.0084 });
 * // throws: the budget covers 1 full proposal, fewer than 3 ...
 * ```
 */
export function checkBudgetCoversProposals(
  limits: BudgetLimits,
  estimate: ProposalCostEstimate,
  spent: { costUsd: number; tokens: number } = { costUsd: 0, tokens: 0 },
  minimumProposals: number = MINIMUM_PROPOSALS,
): BudgetCoverage {
  const byCost =
    limits.maxCostUsd === undefined
      ? Infinity
      : estimate.costUsd <= 0
        ? Infinity
        : Math.floor((limits.maxCostUsd - spent.costUsd) / estimate.costUsd);
  const byTokens =
    limits.maxTokens === undefined
      ? Infinity
      : estimate.tokens <= 0
        ? Infinity
        : Math.floor((limits.maxTokens - spent.tokens) / estimate.tokens);
  const proposalsCovered = Math.max(0, Math.min(byCost, byTokens));
  const one = `one full proposal (a proposer call and one candidate evaluated on optimization + anchor) is estimated at $${estimate.costUsd.toFixed(4)} and ${estimate.tokens} tokens`;
  if (proposalsCovered < minimumProposals) {
    const limiting = byCost <= byTokens ? `maxCostUsd $${limits.maxCostUsd}` : `maxTokens ${limits.maxTokens}`;
    throw new InputError(
      `the budget covers ${proposalsCovered} full proposal${proposalsCovered === 1 ? '' : 's'}, fewer than ${minimumProposals}: ${one}; raise ${limiting} or use a smaller corpus or cheaper model`,
      { code: 'input.budget', field: byCost <= byTokens ? 'maxCostUsd' : 'maxTokens' },
    );
  }
  return {
    proposalsCovered,
    estimate,
    message: Number.isFinite(proposalsCovered)
      ? `the budget covers about ${proposalsCovered} full proposals; ${one}`
      : `no budget cap; ${one}`,
  };
}
