/**
 * Model prices, in USD per million tokens, and the cost of a call.
 *
 * The built-in table lists a handful of well-known models at the vendors'
 * published list prices (standard tier, no batch or cache discounts) as of
 * late 2025. Prices change: check them, and override any of them (or add a
 * model) with the `prices` option, keyed by `provider:model`. A model id
 * matches the longest table entry it starts with, so dated snapshots
 * (`claude-sonnet-4-5-20250929`) take their family's price.
 *
 * Models of the local providers (`ollama`, `openai-compatible`) cost 0. Any
 * other model missing from the table also costs 0, with a note saying so:
 * its cost is unknown, not free, and a `maxCostUsd` cap cannot protect it
 * (use `maxTokens`, or give its price).
 */
import type { ModelSpec } from './model-spec.ts';
import { formatModelSpec } from './model-spec.ts';

/** Price of one model, USD per million tokens. */
export interface ModelPrice {
  inputUsdPerMillion: number;
  outputUsdPerMillion: number;
}

/** The built-in price table (USD per million input / output tokens). */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'openai:gpt-4.1': { inputUsdPerMillion: 2.0, outputUsdPerMillion: 8.0 },
  'openai:gpt-4.1-mini': { inputUsdPerMillion: 0.4, outputUsdPerMillion: 1.6 },
  'openai:gpt-4.1-nano': { inputUsdPerMillion: 0.1, outputUsdPerMillion: 0.4 },
  'openai:gpt-4o': { inputUsdPerMillion: 2.5, outputUsdPerMillion: 10.0 },
  'openai:gpt-4o-mini': { inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 },
  'openai:gpt-5': { inputUsdPerMillion: 1.25, outputUsdPerMillion: 10.0 },
  'openai:gpt-5-mini': { inputUsdPerMillion: 0.25, outputUsdPerMillion: 2.0 },
  'openai:gpt-5-nano': { inputUsdPerMillion: 0.05, outputUsdPerMillion: 0.4 },
  'openai:o4-mini': { inputUsdPerMillion: 1.1, outputUsdPerMillion: 4.4 },
  'anthropic:claude-opus-4-1': { inputUsdPerMillion: 15.0, outputUsdPerMillion: 75.0 },
  'anthropic:claude-sonnet-4-5': { inputUsdPerMillion: 3.0, outputUsdPerMillion: 15.0 },
  'anthropic:claude-sonnet-4': { inputUsdPerMillion: 3.0, outputUsdPerMillion: 15.0 },
  'anthropic:claude-haiku-4-5': { inputUsdPerMillion: 1.0, outputUsdPerMillion: 5.0 },
  'anthropic:claude-3-5-haiku': { inputUsdPerMillion: 0.8, outputUsdPerMillion: 4.0 },
});

/** A looked-up price: `known` false means the cost is unknown and counted as 0 (see `note`). */
export interface PriceLookup {
  price: ModelPrice;
  known: boolean;
  /** The table entry that matched (`provider:model`), when one did. */
  entry?: string;
  /** Why the price is 0, when it is. */
  note?: string;
}

const FREE: ModelPrice = Object.freeze({ inputUsdPerMillion: 0, outputUsdPerMillion: 0 });

/**
 * Looks up the price of a model: the user's `prices` first, then the built-in
 * table, by longest matching `provider:model` prefix.
 *
 * @example
 * ```ts
 * lookupPrice({ provider: 'openai', modelId: 'gpt-4.1-mini' }).price; // { inputUsdPerMillion: 0.4, outputUsdPerMillion: 1.6 }
 * ```
 */
export function lookupPrice(spec: ModelSpec, overrides: Readonly<Record<string, ModelPrice>> = {}): PriceLookup {
  const name = formatModelSpec(spec);
  for (const table of [overrides, DEFAULT_PRICES]) {
    let best: string | undefined;
    for (const key of Object.keys(table)) {
      if (
        (name === key || name.startsWith(`${key}-`) || name.startsWith(`${key}@`)) &&
        (best === undefined || key.length > best.length)
      )
        best = key;
    }
    if (best !== undefined) return { price: table[best]!, known: true, entry: best };
  }
  if (spec.provider === 'ollama' || spec.provider === 'openai-compatible') {
    return { price: FREE, known: true, note: `${name} runs on your own server: cost counted as 0` };
  }
  return {
    price: FREE,
    known: false,
    note: `no price known for ${name}: its cost is counted as 0 (unknown, not free); give it with the prices option or cap tokens instead`,
  };
}

/**
 * Cost of a call in USD: `inputTokens × input price + outputTokens × output price`, prices per million.
 */
export function costUsd(price: ModelPrice, inputTokens: number, outputTokens: number): number {
  return (inputTokens * price.inputUsdPerMillion + outputTokens * price.outputUsdPerMillion) / 1_000_000;
}

/** Rough token count of a text: one token per 4 characters, rounded up (used only for estimates). */
export function estimateTokens(text: string | number): number {
  const characters = typeof text === 'number' ? text : text.length;
  return Math.ceil(characters / 4);
}
