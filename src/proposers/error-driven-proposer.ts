/**
 * The offline error-driven proposer (DESIGN.md §2, "The offline default"), in
 * the tradition of transformation-based learning (Brill 1995): read the
 * optimization partition's failures, generate small single-edit candidate
 * playbooks from them, score each on the optimization partition, and rank by
 * net fixes (examples whose composite rose minus examples whose composite
 * fell), then by composite gain.
 *
 * Every lever of the playbook is reachable: app-type, behaviour and view
 * cues, entity terms, aliases, stop words, roles and suffixes, and the entity
 * model — the cap (`extraction.maxEntities`), the salience floor, the
 * compound policy, attribute terms — and the relation reading: relation
 * phrases (from the words between the two nouns of a missed gold relation)
 * and quantifier cues. Relation recall is not in the seed's composite, so a
 * relation edit is kept only when it also changes the composite (relations
 * feed entity salience, so they can decide which entities make the cap); in
 * local screening, ties on net fixes are broken by relation-recall net fixes.
 *
 * It reads only the optimization partition (the examples and the incumbent's
 * scores in its {@link ProposalContext}). Many of its edits fix only the
 * examples they were read from; the gate's shadow check refuses those as
 * specialization, which is the point of the demonstration.
 */
import { contentHash } from '../artifact/content-hash.ts';
import { asIntentExamples } from '../corpus/intent-example.ts';
import type { ExampleScoreRecord } from '../evaluator/partition-score.ts';
import { compilePlaybook } from '../tasks/intent/offline/extract.ts';
import {
  generateEditCandidates,
  isNearDuplicateBundle,
  lexiconBundleTerms,
  type EditCandidate,
} from '../tasks/intent/offline/edit-candidates.ts';
import { parsePlaybook, type Playbook } from '../tasks/intent/offline/playbook.ts';
import { rememberPlaybook } from '../tasks/intent/offline/playbook-cache.ts';
import { DEFAULT_WEIGHTS } from '../tasks/intent/scorer.ts';
import { editPlaybook } from '../tasks/intent/offline/playbook-edit.ts';
import type { ProposalContext, ProposalResult, Proposer } from './proposer.ts';
import { selectDiverse } from './select-diverse.ts';
import type { Evaluated, LocalEvidence, QueuedEdit } from './error-driven-outcomes.ts';
import {
  compare,
  compareEvaluated,
  compareText,
  compositesById,
  evaluationOrder,
  screenLocally,
  toCandidate,
  toEvidence,
  unscoredCandidates,
} from './error-driven-outcomes.ts';

import {
  DEFAULT_ERROR_DRIVEN_MAX_EVALUATIONS,
  DEFAULT_ERROR_DRIVEN_MAX_SCREENED,
  ERROR_DRIVEN_PROPOSER_ID,
} from '../tasks/intent/offline/ids.ts';

export {
  DEFAULT_ERROR_DRIVEN_MAX_EVALUATIONS,
  DEFAULT_ERROR_DRIVEN_MAX_SCREENED,
  ERROR_DRIVEN_PROPOSER_ID,
} from '../tasks/intent/offline/ids.ts';
import { characterCount } from '../text/characters.ts';

export interface ErrorDrivenProposerOptions {
  /**
   * Most candidate playbooks scored with `evaluateOptimization` per round, best
   * local screening first (default {@link DEFAULT_ERROR_DRIVEN_MAX_EVALUATIONS}, 60; 300 when
   * `localScreening` is off). 0: the proposer scores nothing itself and
   * returns its best locally screened edits (ranked by local net fixes), or
   * without local screening the first edits generated; the gate evaluates
   * them as it does every candidate.
   */
  maxEvaluations?: number;
  /**
   * Most candidate playbooks screened locally per round (default {@link DEFAULT_ERROR_DRIVEN_MAX_SCREENED}, 1000): the
   * proposer reruns the offline extractor on the examples the edit can touch
   * and scores the changed outputs with the intent scorer; only edits whose
   * local net fixes reach `minNetFixes` are sent to `evaluateOptimization`.
   * 0: no local screening (as `localScreening: false`, keeping the
   * `maxEvaluations` default): edits go to `evaluateOptimization` in
   * generation order. Set `localScreening: false` when the study's executor
   * is not the offline one.
   */
  maxScreened?: number;
  /** Screen candidates locally before the official evaluation (default true). */
  localScreening?: boolean;
  /** Most cue/alias suggestions drawn from one error of one example (default 12). */
  maxSuggestionsPerError?: number;
  /** Smallest precision on the optimization examples of a new cue (default 0.5; see `GenerateOptions`). */
  minCuePrecision?: number;
  /** Smallest lift of a new cue over its value's base rate (default 1.5; see `GenerateOptions`). */
  minCueLift?: number;
  /** Smallest net fixes a candidate needs to be returned (default 1). */
  minNetFixes?: number;
  /**
   * The study's composite weights by component name (default: the seed's).
   * Local screening scores with them, and a weight on `entityPrecision` or
   * `relationRecall` lets spurious entities and missed relations suggest edits
   * of their own (stop words, attributes, a lower cap or a higher salience
   * floor, noun categories; relation phrases and quantifiers).
   */
  weights?: Readonly<Record<string, number>>;
}

/**
 * Creates the error-driven proposer.
 *
 * @param options evaluation budget and generation limits (see {@link ErrorDrivenProposerOptions})
 * @example
 * const proposer = createErrorDrivenProposer({ maxEvaluations: 200 });
 * const { candidates } = await proposer.propose(context);
 */
export function createErrorDrivenProposer(options: ErrorDrivenProposerOptions = {}): Proposer {
  const maxEvaluations = Math.max(
    0,
    options.maxEvaluations ?? ((options.localScreening ?? true) ? DEFAULT_ERROR_DRIVEN_MAX_EVALUATIONS : 300),
  );
  const maxScreened = Math.max(0, options.maxScreened ?? DEFAULT_ERROR_DRIVEN_MAX_SCREENED);
  const weights: Readonly<Record<string, number>> = { ...DEFAULT_WEIGHTS, ...(options.weights ?? {}) };
  const settings: ErrorDrivenSettings = {
    options,
    maxEvaluations,
    maxScreened,
    // maxScreened 0 screens nothing: the edits go to the evaluator (or, with maxEvaluations 0, to the gate) unscreened.
    localScreening: (options.localScreening ?? true) && maxScreened > 0,
    minNetFixes: Math.max(1, options.minNetFixes ?? 1),
    weights,
  };
  return {
    id: ERROR_DRIVEN_PROPOSER_ID,
    propose: (context) => proposeErrorDriven(settings, context),
  };
}

/** The error-driven proposer's settings, resolved from its options. */
interface ErrorDrivenSettings {
  readonly options: ErrorDrivenProposerOptions;
  readonly maxEvaluations: number;
  readonly maxScreened: number;
  readonly localScreening: boolean;
  readonly minNetFixes: number;
  /** The study's composite weights, the seed's filled in. */
  readonly weights: Readonly<Record<string, number>>;
}

/** One round of the error-driven proposer: check, read the evidence, generate, queue, evaluate, rank. */
async function proposeErrorDriven(settings: ErrorDrivenSettings, context: ProposalContext): Promise<ProposalResult> {
  if (context.incumbentScores.partition !== 'optimization') {
    return {
      candidates: [],
      failures: [
        { reason: `incumbent scores are for partition "${context.incumbentScores.partition}", not "optimization"` },
      ],
    };
  }
  const parsed = parsePlaybook(context.incumbentText);
  if (!parsed.ok) {
    return {
      candidates: [],
      failures: [{ reason: `the incumbent playbook is invalid: ${parsed.errors[0]?.message ?? 'unknown error'}` }],
    };
  }
  if (context.maxCandidates <= 0) return { candidates: [], failures: [] };
  const evidence = readEvidence(context, parsed.playbook);
  const allowed = allowedEdits(settings, context, parsed.playbook, evidence);
  const queue = buildQueue(settings, context, parsed.playbook, evidence, allowed);
  if (settings.maxEvaluations === 0)
    return { candidates: unscoredCandidates(queue, context.maxCandidates, settings.localScreening), failures: [] };
  return { candidates: await evaluateQueue(settings, context, queue), failures: [] };
}

/** The optimization examples with a valid incumbent score (first valid repeat), as local evidence. */
function readEvidence(context: ProposalContext, playbook: Playbook): LocalEvidence[] {
  const compiled = compilePlaybook(playbook);
  const firstValid = new Map<string, ExampleScoreRecord & { valid: true }>();
  for (const record of context.incumbentScores.examples) {
    if (record.valid && !firstValid.has(record.exampleId)) firstValid.set(record.exampleId, record);
  }
  const evidence: LocalEvidence[] = [];
  for (const example of asIntentExamples(context.examples)) {
    const record = firstValid.get(example.id);
    if (example.partition !== 'optimization' || record === undefined) continue;
    evidence.push(toEvidence(example, record, compiled));
  }
  return evidence;
}

/**
 * The generated edits the program lets change, never one already tried under the same delta (against an
 * older incumbent) nor a learned-lexicon bundle that nearly repeats one tried before (the same terms but one or two).
 */
function allowedEdits(
  settings: ErrorDrivenSettings,
  context: ProposalContext,
  playbook: Playbook,
  evidence: readonly LocalEvidence[],
): EditCandidate[] {
  const { options, weights } = settings;
  const generated = generateEditCandidates(playbook, evidence, {
    ...(options.maxSuggestionsPerError !== undefined ? { maxSuggestionsPerError: options.maxSuggestionsPerError } : {}),
    ...(options.minCuePrecision !== undefined ? { minCuePrecision: options.minCuePrecision } : {}),
    ...(options.minCueLift !== undefined ? { minCueLift: options.minCueLift } : {}),
    precision: (weights.entityPrecision ?? 0) > 0,
    relations: (weights.relationRecall ?? 0) > 0,
  });
  const editable = new Set(context.limits.editableSections);
  const pastDeltas = new Set(context.history.map((entry) => entry.delta));
  const pastBundles = [...pastDeltas].map(lexiconBundleTerms).filter((terms): terms is Set<string> => terms !== null);
  return generated.filter(
    (candidate) =>
      (editable.size === 0 || editable.has(candidate.edit.path[0])) &&
      !pastDeltas.has(candidate.delta) &&
      !(
        candidate.kind === 'lexiconBundle' &&
        pastBundles.some((terms) => isNearDuplicateBundle(terms, lexiconBundleTerms(candidate.delta)!))
      ),
  );
}

/**
 * Builds each candidate text once, dropping what does not apply, is too long or was tried; with local
 * screening keeps (up to `maxScreened` screened) the edits whose local net fixes reach `minNetFixes`, best
 * first, else takes edits in evaluation order up to what will be scored (or proposed unscored).
 */
function buildQueue(
  settings: ErrorDrivenSettings,
  context: ProposalContext,
  playbook: Playbook,
  evidence: readonly LocalEvidence[],
  allowed: readonly EditCandidate[],
): QueuedEdit[] {
  const { localScreening, maxScreened, maxEvaluations } = settings;
  // The most edits taken into the queue without local screening: what will be scored, or proposed unscored.
  const unscreenedLimit = maxEvaluations === 0 ? context.maxCandidates : maxEvaluations;
  const queue: QueuedEdit[] = [];
  const seen = new Set<string>();
  let screened = 0;
  for (const candidate of evaluationOrder(allowed)) {
    if (context.signal?.aborted === true) break;
    if (localScreening ? screened >= maxScreened : queue.length >= unscreenedLimit) break;
    const edited = editPlaybook(context.incumbentText, candidate.edit);
    if (edited === null || characterCount(edited.text) > context.limits.maxArtifactCharacters) continue;
    const { text } = edited;
    const hash = contentHash(text);
    if (context.triedHashes.has(hash) || seen.has(hash)) continue;
    seen.add(hash);
    if (!localScreening) {
      queue.push({ candidate, text, playbook: edited.playbook, local: 0, localGain: 0, relationNet: 0 });
      continue;
    }
    screened += 1;
    const compiledEdit = compilePlaybook(edited.playbook);
    const local = screenLocally(candidate, compiledEdit, playbook, evidence, settings.weights);
    if (local !== null && local.netFixes >= settings.minNetFixes) {
      queue.push({
        candidate,
        text,
        playbook: edited.playbook,
        compiled: compiledEdit,
        local: local.netFixes,
        localGain: local.gain,
        relationNet: local.relationNetFixes,
      });
    }
  }
  if (localScreening) {
    queue.sort(
      (a, b) =>
        b.local - a.local ||
        b.localGain - a.localGain ||
        b.relationNet - a.relationNet ||
        compareText(a.candidate.delta, b.candidate.delta),
    );
  }
  return queue;
}

/** The frozen evaluator decides: scores the queue in order (up to `maxEvaluations`) and returns the diverse best with enough net fixes. */
async function evaluateQueue(settings: ErrorDrivenSettings, context: ProposalContext, queue: readonly QueuedEdit[]) {
  const incumbentComposites = compositesById(context.incumbentScores.examples);
  const evaluated: Evaluated[] = [];
  let evaluations = 0;
  for (const { candidate, text, playbook, compiled: compiledEdit } of queue) {
    if (evaluations >= settings.maxEvaluations || context.signal?.aborted === true) break;
    // Cached for the evaluator, which reads the candidate next (no second parse of its text).
    if (!rememberPlaybook(text, playbook, compiledEdit).ok) continue;
    evaluations += 1;
    const score = await context.evaluateOptimization(text);
    evaluated.push(compare(candidate, text, incumbentComposites, score, context.incumbentScores.composite));
  }
  const kept = evaluated
    .filter((entry) => entry.netFixes >= settings.minNetFixes && entry.netFixes > 0)
    .sort(compareEvaluated);
  return selectDiverse(kept, context.maxCandidates, compareEvaluated).map((entry) => toCandidate(entry, evaluations));
}
