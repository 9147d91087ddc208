/**
 * The proposer of an online study, from `proposer:` in kloop.yaml: `ideas`
 * (the offline stand-in, no model: src/online/proposers/ideas-proposer.ts)
 * or `reflective` (a model: src/online/proposers/reflective-online-proposer.ts),
 * whose client is built as the offline reflective proposer's
 * (src/providers/: key, base URL, retries, rate limit, usage and price).
 *
 * The model's cost is counted across runs in the notebook (`study_state`
 * key {@link PROPOSER_COST_KEY}); once it reaches `stopping.maxCostUsd` the
 * next proposal is refused before any call and the study stops as `budget`.
 */
import { BudgetExceededError, createUsageMeter } from '../../providers/budget.ts';
import { resolveLanguageModel } from '../../providers/create-language-model.ts';
import { createLlmClient } from '../../providers/llm-client.ts';
import { parseModelSpec } from '../../providers/model-spec.ts';
import type { StudyDatabase } from '../../storage/study-database.ts';
import { readOnlineState, writeOnlineState } from '../../storage/online-store.ts';
import type { OnlineStudyConfig } from '../config.ts';
import { createIdeasProposer, type OnlineProposer } from './ideas-proposer.ts';
import { createReflectiveOnlineProposer } from './reflective-online-proposer.ts';

/** Study-state key of the reflective proposer's spending so far (JSON `{ costUsd, calls, inputTokens, outputTokens }`). */
export const PROPOSER_COST_KEY = 'online:proposer:usage';

/** What {@link createOnlineProposer} may be given beside the config. */
export interface OnlineProposerContext {
  db: StudyDatabase;
  /** Environment to read keys and base URLs from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** fetch implementation (tests). Default the global fetch. */
  fetch?: typeof fetch;
}

/**
 * Builds the study's online proposer.
 *
 * @throws InputError for a reflective proposer whose model, key or base URL is wrong (file, field)
 */
export async function createOnlineProposer(
  config: OnlineStudyConfig,
  context: OnlineProposerContext,
): Promise<OnlineProposer> {
  const proposer = config.proposer;
  if (proposer.kind === 'ideas') return createIdeasProposer();
  const spec = parseModelSpec(proposer.model, { file: config.configPath, field: 'proposer.model' });
  const resolved = resolveLanguageModel(spec, {
    ...(proposer.baseURL !== undefined ? { baseURL: proposer.baseURL } : {}),
    ...(proposer.apiKeyEnv !== undefined ? { apiKeyEnv: proposer.apiKeyEnv } : {}),
    ...(context.env !== undefined ? { env: context.env } : {}),
    ...(context.fetch !== undefined ? { fetch: context.fetch } : {}),
    file: config.configPath,
    field: 'proposer.model',
    section: 'proposer',
  });
  const client = createLlmClient({
    resolved,
    ...(proposer.temperature !== undefined ? { temperature: proposer.temperature } : {}),
    maxOutputTokens: proposer.maxOutputTokens,
    timeoutMs: proposer.timeoutMs,
    meter: createUsageMeter(),
  });
  const { db } = context;
  const spent = async (): Promise<{ costUsd: number; calls: number; inputTokens: number; outputTokens: number }> =>
    JSON.parse(
      (await readOnlineState(db, PROPOSER_COST_KEY)) ?? '{"costUsd":0,"calls":0,"inputTokens":0,"outputTokens":0}',
    );
  const inner = createReflectiveOnlineProposer({
    client,
    metric: config.metrics.primary.name,
    onUsage: async (usage) => {
      const total = await spent();
      await writeOnlineState(
        db,
        PROPOSER_COST_KEY,
        JSON.stringify({
          costUsd: total.costUsd + usage.costUsd,
          calls: total.calls + 1,
          inputTokens: total.inputTokens + usage.inputTokens,
          outputTokens: total.outputTokens + usage.outputTokens,
        }),
      );
    },
  });
  const maxCostUsd = config.stopping.maxCostUsd;
  return {
    name: inner.name,
    async propose(proposal) {
      const total = await spent();
      if (maxCostUsd !== undefined && total.costUsd >= maxCostUsd) {
        throw new BudgetExceededError(
          `the reflective proposer's model has cost $${total.costUsd.toFixed(4)} over ${total.calls} calls (stopping.maxCostUsd: ${maxCostUsd})`,
        );
      }
      return inner.propose(proposal);
    },
  };
}
