import { describe, expect, it } from 'vitest';
import { InfrastructureError, InputError } from '../errors.ts';
import { BudgetExceededError, checkBudgetCoversProposals, createUsageMeter, estimateProposalCost } from './budget.ts';
import { withCallStage } from './call-stage.ts';
import { costUsd, DEFAULT_PRICES, lookupPrice } from './prices.ts';

const PRICE = { inputUsdPerMillion: 1, outputUsdPerMillion: 4 };

describe('prices', () => {
  it('looks up the table by longest provider:model prefix, with user overrides first', () => {
    expect(lookupPrice({ provider: 'openai', modelId: 'gpt-4.1-mini' }).price).toEqual(
      DEFAULT_PRICES['openai:gpt-4.1-mini'],
    );
    expect(lookupPrice({ provider: 'openai', modelId: 'gpt-4.1-mini-2025-04-14' }).entry).toBe('openai:gpt-4.1-mini');
    expect(lookupPrice({ provider: 'openai', modelId: 'gpt-4.1' }).entry).toBe('openai:gpt-4.1');
    expect(lookupPrice({ provider: 'anthropic', modelId: 'claude-sonnet-4-5-20250929' }).entry).toBe(
      'anthropic:claude-sonnet-4-5',
    );
    expect(
      lookupPrice({ provider: 'openai', modelId: 'gpt-4.1-mini' }, { 'openai:gpt-4.1-mini': PRICE }).price,
    ).toEqual(PRICE);
  });

  it('counts unknown models as 0 with a note, and local ones as 0', () => {
    const unknown = lookupPrice({ provider: 'openai', modelId: 'gpt-9' });
    expect(unknown).toMatchObject({ known: false, price: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 } });
    expect(unknown.note).toMatch(/unknown, not free/);
    expect(lookupPrice({ provider: 'ollama', modelId: 'llama3.1' })).toMatchObject({
      known: true,
      price: { inputUsdPerMillion: 0 },
    });
  });

  it('computes cost per million tokens', () => {
    expect(costUsd(PRICE, 1_000_000, 500_000)).toBe(3);
  });
});

describe('createUsageMeter', () => {
  it('counts each call under the stage it was made in, the innermost stage winning, across awaits and concurrent branches', async () => {
    const meter = createUsageMeter();
    const call = async (): Promise<void> => {
      await new Promise((resolve) => setImmediate(resolve));
      meter.record({ inputTokens: 1, outputTokens: 1, costUsd: 0 });
    };
    await withCallStage('proposer', async () => {
      await call();
      await Promise.all([withCallStage('screening', call), withCallStage('screening', call), call()]);
    });
    await Promise.all([
      withCallStage('shadow', async () => Promise.all([call(), withCallStage('incumbent', call)])),
      withCallStage('calibration', call),
    ]);
    meter.record({ inputTokens: 0, outputTokens: 0, costUsd: 0 }, true); // a cached answer is no call
    expect(meter.totals().callsByStage).toEqual({
      calibration: 1,
      proposer: 2,
      screening: 2,
      candidates: 0,
      incumbent: 1,
      shadow: 1,
      other: 0,
    });
    expect(meter.totals().calls).toBe(7);
  });

  it('sums usage, counts cached answers apart, and refuses calls past a cap', () => {
    const meter = createUsageMeter({ maxCostUsd: 0.01 });
    meter.record({ inputTokens: 1000, outputTokens: 500, costUsd: 0.003 });
    meter.record({ inputTokens: 0, outputTokens: 0, costUsd: 0 }, true);
    expect(meter.totals()).toEqual({
      inputTokens: 1000,
      outputTokens: 500,
      costUsd: 0.003,
      calls: 1,
      cachedCalls: 1,
      callsByStage: { calibration: 0, proposer: 0, screening: 0, candidates: 0, incumbent: 0, shadow: 0, other: 1 },
    });
    expect(() => meter.assertCanSpend(1000, PRICE)).not.toThrow();
    meter.record({ inputTokens: 0, outputTokens: 0, costUsd: 0.0075 });
    const error = (() => {
      try {
        meter.assertCanSpend(1000, PRICE);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as Error).name).toBe('BudgetExceededError');
    expect((error as BudgetExceededError).code).toBe('budget');
    expect((error as BudgetExceededError).isRetryable).toBe(false);
  });

  it('reads a configured 0 as 0: no priced call, but a free model may run', () => {
    expect(() => createUsageMeter({ maxCostUsd: 0 }).assertCanSpend(10, PRICE)).toThrow(BudgetExceededError);
    expect(() =>
      createUsageMeter({ maxCostUsd: 0 }).assertCanSpend(10, { inputUsdPerMillion: 0, outputUsdPerMillion: 0 }),
    ).not.toThrow();
    expect(() => createUsageMeter({ maxTokens: 0 }).assertCanSpend(1, PRICE)).toThrow(/token budget/);
  });
});

describe('checkBudgetCoversProposals', () => {
  const estimate = estimateProposalCost({
    executorPrice: PRICE,
    proposerPrice: PRICE,
    executorSystemCharacters: 4000,
    goalCharacters: [400, 400, 400, 400],
    repeats: 2,
    executorOutputTokens: 300,
    proposerInputCharacters: 20_000,
    proposerOutputTokens: 2000,
  });

  it('estimates a proposer call plus one candidate on optimization + anchor', () => {
    expect(estimate.inputTokens).toBe(8 * 1100 + 5000);
    expect(estimate.outputTokens).toBe(8 * 300 + 2000);
    expect(estimate.costUsd).toBeCloseTo((13_800 * 1 + 4400 * 4) / 1e6);
  });

  it('refuses a budget that covers fewer than 3 proposals, saying how many', () => {
    expect(() => checkBudgetCoversProposals({ maxCostUsd: estimate.costUsd * 2.5 }, estimate)).toThrow(InputError);
    expect(() => checkBudgetCoversProposals({ maxCostUsd: estimate.costUsd * 2.5 }, estimate)).toThrow(
      /covers 2 full proposals, fewer than 3/,
    );
    expect(() => checkBudgetCoversProposals({ maxTokens: estimate.tokens }, estimate)).toThrow(/maxTokens/);
    expect(checkBudgetCoversProposals({ maxCostUsd: estimate.costUsd * 3.5 }, estimate).proposalsCovered).toBe(3);
    expect(checkBudgetCoversProposals({}, estimate).proposalsCovered).toBe(Infinity);
    expect(() => checkBudgetCoversProposals({ maxCostUsd: 1 }, estimate, { costUsd: 0.999, tokens: 0 })).toThrow(
      InputError,
    );
  });
});
