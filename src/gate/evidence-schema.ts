/**
 * The stored evidence of a decision, typed: the JSON the notebook keeps in
 * `experiments.evidence` (src/loop/notebook.ts writes it) is
 * `{ checks, shadowConsulted, ...extra }`, where `checks` are the gate's
 * checks (src/gate/gate.ts, src/gate/shadow-check.ts, src/gate/racing/) and
 * the loop's (`diversity`, `evaluation`), and the extra evidence is the
 * loop's (`scores`, `rebase`, `racing`, `retrial`, `usage`, ...).
 *
 * One zod schema per check says what its `data` holds. A field the gate
 * writes is typed here, and may be absent (evidence written by an earlier
 * version of the gate has fewer fields); a field that is present with the
 * wrong type, a check without its name, `passed`, `statistic`, `threshold`
 * or `detail`, a check of an unknown name, or evidence without `checks` or
 * `shadowConsulted` is malformed: {@link parseStoredEvidence} throws a StorageError naming the
 * experiment and the field, never reads it as a default (issue 32).
 *
 * Numbers: JSON has no NaN or Infinity (`JSON.stringify` writes `null`), so
 * every stored number may be `null` (e.g. a t statistic of no pairs).
 *
 * @module
 */
import { z } from 'zod';
import { StorageError } from '../errors.ts';

/** A stored number: a finite number, or null where the gate computed NaN or ±Infinity. */
const storedNumber = z.number().nullable();

/** The paired test's fields, as `pairedTest` (src/gate/gate.ts) stores them: t-test or McNemar's exact test. */
const pairedTestFields = {
  test: z.string().optional(),
  pairedTest: z.enum(['paired-t', 'mcnemar-exact']).optional(),
  t: storedNumber.optional(),
  df: storedNumber.optional(),
  pValue: storedNumber.optional(),
  b: z.number().optional(),
  c: z.number().optional(),
  bothRight: z.number().optional(),
  bothWrong: z.number().optional(),
  discordant: z.number().optional(),
  statistic: storedNumber.optional(),
  binaryFallback: z.string().optional(),
};

/** `validity` of a stochastic executor: Fisher's exact test on invalid counts (absent for a deterministic one). */
const validityData = z
  .looseObject({
    test: z.string(),
    candidateInvalid: z.number(),
    candidateOutputs: z.number(),
    incumbentInvalid: z.number(),
    incumbentOutputs: z.number(),
    pValue: storedNumber,
  })
  .partial();

/** `margin`: examples compared, those left out, τ and what it is made of. */
const marginData = z
  .looseObject({
    examples: z.number(),
    leftOut: z.array(z.string()),
    tau: storedNumber,
    thresholdK: storedNumber,
    noiseSd: storedNumber,
    repeats: z.union([z.number(), z.string()]),
  })
  .partial();

/** `significance`: the paired test, counts improved and worsened, and Welch's test with ≥ 2 stochastic runs. */
const significanceData = z
  .looseObject({
    ...pairedTestFields,
    test: z.string(),
    improved: z.number(),
    worsened: z.number(),
    welch: z.looseObject({ test: z.string(), t: storedNumber, df: storedNumber, pValue: storedNumber }).partial(),
  })
  .partial();

/** `anchors`: each regression, the anchors that became invalid, Δanchor and the closest anchor. */
const anchorsData = z
  .looseObject({
    regressions: z.array(z.looseObject({ id: z.string(), drop: storedNumber, tolerance: storedNumber }).partial()),
    newlyInvalid: z.array(z.string()),
    delta: storedNumber,
    closest: z.string().nullable(),
  })
  .partial();

/** The race evidence (src/gate/racing/race.ts `RaceEvidence`), as the racing check and a raced shadow store it. */
const raceData = z
  .looseObject({
    stop: z.enum(['futility', 'complete', 'early']),
    rule: z.string().optional(),
    batches: z.number(),
    of: z.number(),
    evaluated: z.number(),
    planned: z.number(),
    delta: storedNumber,
    bound: z.looseObject({ alpha: storedNumber, lower: storedNumber, upper: storedNumber }).partial(),
    early: z
      .looseObject({
        rule: z.string(),
        test: z.string(),
        alpha: storedNumber,
        looks: z.array(
          z
            .looseObject({
              repeats: z.number(),
              of: z.number(),
              level: storedNumber,
              spent: storedNumber,
              pValue: storedNumber,
              delta: storedNumber,
              margin: storedNumber,
              passed: z.boolean(),
            })
            .partial(),
        ),
        spent: storedNumber,
      })
      .partial(),
  })
  .partial();

/**
 * `shadow`: the shadow check's counts, Δshadow, what it had to reach, the
 * test and its power (src/gate/shadow-check.ts); or, for a raced shadow
 * stopped for futility, the race's evidence under `racing`.
 */
const shadowData = z
  .looseObject({
    ...pairedTestFields,
    examples: z.number(),
    leftOut: z.number(),
    improved: z.number(),
    worsened: z.number(),
    delta: storedNumber,
    required: storedNumber,
    standardError: storedNumber.optional(),
    margin: storedNumber.optional(),
    testStandardError: storedNumber.optional(),
    sharedRunVariance: storedNumber.optional(),
    power: z
      .looseObject({ alpha: storedNumber, forOptimizationDelta: storedNumber, forObservedDelta: storedNumber })
      .partial(),
    invalidRose: z.boolean().optional(),
    racing: z.looseObject({ delta: storedNumber.optional() }),
  })
  .partial();

/** `evaluation`: example-repeats that failed in the infrastructure (absent for a candidate skipped after repeated failures). */
const evaluationData = z
  .looseObject({ transient: z.number(), total: z.number(), messages: z.array(z.string()) })
  .partial();

/** No data: `constraints` (its statistic is the violation count), `diversity` (its statistic the distance). */
const noData = z.looseObject({});

/** The schema of each check's `data`, by the check's name. */
export const CHECK_DATA_SCHEMAS = {
  constraints: noData,
  validity: validityData,
  margin: marginData,
  significance: significanceData,
  anchors: anchorsData,
  shadow: shadowData,
  diversity: noData,
  evaluation: evaluationData,
  racing: raceData,
} as const;

/** Builds one check's schema: the fields every check has, and its own `data`. */
function checkSchema<Name extends keyof typeof CHECK_DATA_SCHEMAS>(name: Name) {
  return z.object({
    name: z.literal(name),
    passed: z.boolean(),
    statistic: storedNumber,
    threshold: storedNumber,
    detail: z.string(),
    data: CHECK_DATA_SCHEMAS[name].optional(),
  });
}

/** One stored check: `{ name, passed, statistic, threshold, detail, data? }`, `data` by the check's name. */
export const storedCheckSchema = z.discriminatedUnion('name', [
  checkSchema('constraints'),
  checkSchema('validity'),
  checkSchema('margin'),
  checkSchema('significance'),
  checkSchema('anchors'),
  checkSchema('shadow'),
  checkSchema('diversity'),
  checkSchema('evaluation'),
  checkSchema('racing'),
]);

/**
 * The stored evidence of one experiment: its checks, whether the gate
 * consulted the shadow, and the loop's extra evidence (typed where it is
 * read: `scores.optimization.candidate`, the candidate's optimization
 * composite). Other extra fields are kept as stored.
 */
export const storedEvidenceSchema = z.looseObject({
  checks: z.array(storedCheckSchema),
  shadowConsulted: z.boolean(),
  scores: z
    .looseObject({
      optimization: z.looseObject({ candidate: storedNumber.optional() }).optional(),
    })
    .optional(),
  /** Adaptive repeats (src/loop/adaptive-evaluation.ts): example-repeats copied, not evaluated. */
  adaptiveRepeats: z
    .looseObject({ copied: z.looseObject({ candidate: z.number(), incumbent: z.number() }) })
    .optional(),
});

/** The stored evidence of one experiment, as {@link parseStoredEvidence} returns it. */
export type StoredEvidence = z.infer<typeof storedEvidenceSchema>;

/** One stored check, as {@link parseStoredEvidence} returns it. */
export type StoredCheck = z.infer<typeof storedCheckSchema>;

/**
 * Parses an experiment's stored evidence (the `experiments.evidence` text).
 *
 * @param text the stored JSON text
 * @param experimentId the experiment's id, named in the error
 * @throws StorageError (code `storage`, with `experimentId` and
 *   `field`) when the text is not JSON, or when a field is missing or of the
 *   wrong type: e.g. `experiment 12: stored evidence is malformed at
 *   evidence.shadowConsulted: Invalid input: expected boolean, received undefined`
 */
export function parseStoredEvidence(text: string, experimentId: number): StoredEvidence {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new StorageError(`experiment ${experimentId}: stored evidence is not JSON: ${(error as Error).message}`, {
      experimentId: String(experimentId),
      field: 'evidence',
      cause: error,
    });
  }
  const parsed = storedEvidenceSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = ['evidence', ...issue.path.map(String)].join('.');
  throw new StorageError(`experiment ${experimentId}: stored evidence is malformed at ${field}: ${issue.message}`, {
    experimentId: String(experimentId),
    field,
  });
}
