/**
 * The `signals` section of `kloop.yaml`: how Loop D stores and analyses
 * production signals, how Loop C mines shapes, and the limits of the signal
 * endpoint. Every key is optional; a configured 0 means 0.
 *
 * ```yaml
 * signals:
 *   storeGoals: true              # false: goal texts are dropped before storage
 *   windowDays: 7                 # rolling window of the analysis, in days
 *   confidenceThreshold: 0.7      # confidence below this is low
 *   lowConfidenceMethods: [decomposed, partial]   # these methods are low whatever the confidence
 *   minClusterSize: 5             # smaller clusters are not reported
 *   entityCountBuckets: [3, 6, 10]  # upper bounds: 0, 1-3, 4-6, 7-10, 11+
 *   typicalShare: 0.5             # an uncovered entity/behaviour is typical of a cluster at this share
 *   exampleGoals: 3               # example goals shown per cluster
 *   mining: { minSupport: 5, thinCorpusBelow: 3 }
 *   endpoint: { maxBodyBytes: 1048576, ratePerSecond: 5, burst: 20 }
 * ```
 */
import { z } from 'zod';
import { ASSEMBLY_METHODS } from '../assembly/assembly-method.ts';

const count = (minimum: number) => z.int().min(minimum);

/** Loop C (pattern mining) settings. */
export const miningConfigSchema = z.strictObject({
  /** A shape is frequent when at least this many signals, or corpus examples, have it. Default 5. */
  minSupport: count(1).default(5),
  /** A shape is thin in the corpus when fewer examples than this contain it. Default 3. */
  thinCorpusBelow: count(0).default(3),
  /** Most candidate examples proposed per shape. Default 3. */
  examplesPerShape: count(0).default(3),
});

/** Limits of the signal endpoint (`kloop serve`). */
export const endpointConfigSchema = z.strictObject({
  /** Largest request body, in bytes (larger → 413). Default 1 MiB. */
  maxBodyBytes: count(1).default(1_048_576),
  /** Token-bucket refill rate per client, in requests per second (over the burst → 429). Default 5. */
  ratePerSecond: z.number().gt(0).default(5),
  /** Token-bucket capacity per client, in requests. Default 20. */
  burst: count(1).default(20),
});

/** The `signals` section (strict: unknown keys are errors). */
export const signalsConfigSchema = z
  .strictObject({
    /** Store the goal text of each signal. Default true; false drops it before storage. */
    storeGoals: z.boolean().default(true),
    /** Length of the rolling analysis window, in days (> 0). Default 7. */
    windowDays: z.number().gt(0).default(7),
    /** A signal with confidence strictly below this is low-confidence, in [0, 1]. Default 0.7. */
    confidenceThreshold: z.number().min(0).max(1).default(0.7),
    /** Assembly methods that make a signal low-confidence whatever its confidence. Default decomposed, partial. */
    lowConfidenceMethods: z.array(z.enum(ASSEMBLY_METHODS)).default(['decomposed', 'partial']),
    /** Smallest cluster reported. Default 5. */
    minClusterSize: count(1).default(5),
    /** Increasing inclusive upper bounds of the entity-count buckets. Default [3, 6, 10]: 0, 1-3, 4-6, 7-10, 11+. */
    entityCountBuckets: z.array(count(1)).min(1).default([3, 6, 10]),
    /** Share of a cluster's signals an uncovered entity or behaviour needs to be typical of it, in (0, 1]. Default 0.5. */
    typicalShare: z.number().gt(0).max(1).default(0.5),
    /** Example goals shown per cluster. Default 3. */
    exampleGoals: count(0).default(3),
    mining: miningConfigSchema.prefault({}),
    endpoint: endpointConfigSchema.prefault({}),
  })
  .superRefine((section, context) => {
    section.entityCountBuckets.forEach((bound, index) => {
      const previous = section.entityCountBuckets[index - 1];
      if (previous !== undefined && bound <= previous) {
        context.addIssue({
          code: 'custom',
          path: ['entityCountBuckets', index],
          message: 'bucket bounds must increase strictly',
        });
      }
    });
  });

/** The `signals` section with defaults applied. */
export type SignalsConfig = z.output<typeof signalsConfigSchema>;

/** The defaults of the `signals` section. */
export const DEFAULT_SIGNALS_CONFIG: SignalsConfig = Object.freeze(signalsConfigSchema.parse({}));
