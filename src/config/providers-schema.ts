/** `providers:` of `kloop.yaml` (src/config/config.ts): settings per model provider. */
import { z } from 'zod';
import { PROVIDERS, type ProviderName } from '../providers/model-spec.ts';

/** Default of `providers.<name>.maxInFlight`: model requests in flight at once per provider. */
export const DEFAULT_MAX_IN_FLIGHT = 8;

/** Settings of one model provider (`providers.openai`, ...). */
const providerSettingsSchema = z.strictObject({
  /**
   * Most requests to this provider in flight at once, the executor's and the
   * proposer's together, whatever `proposer.concurrency` (integer ≥ 1; 0 is
   * refused: it would send nothing). The evaluator issues at least this many
   * per artifact, so with enough examples this is the number observed. An
   * HTTP 429 lowers it for a while (AIMD, src/providers/rate-limiter.ts), never
   * above it. Default 8.
   */
  maxInFlight: z.int('expected an integer').min(1, 'must be at least 1: 0 requests in flight would send none'),
});

/** `providers:` — settings per model provider, by its name in `provider:model`. */
export const providersSchema = z.strictObject(
  Object.fromEntries(PROVIDERS.map((name) => [name, providerSettingsSchema.optional()])) as Record<
    ProviderName,
    z.ZodOptional<typeof providerSettingsSchema>
  >,
);
