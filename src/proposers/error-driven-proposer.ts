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
import { asIntentExamples } from '../corpus/example.ts';
import type { ExampleScoreRecord } from '../evaluator/partition-score.ts';
import { compilePlaybook } from '../tasks/intent/offline/extract.ts';
import {
  generateEditCandidates,
  isNearDuplicateBundle,
  lexiconBundleTerms,
} from '../tasks/intent/offline/edit-candidates.ts';
import { parsePlaybook } from '../tasks/intent/offline/playbook.ts';
import { rememberPlaybook } from '../tasks/intent/offline/playbook-cache.ts';
import { DEFAULT_WEIGHTS } from '../tasks/intent/scorer.ts';
import { editPlaybook } from '../tasks/intent/offline/playbook-edit.ts';
import type { ProposalContext, ProposalFailure, ProposalResult, Proposer } from './proposer.ts';
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
  // maxScreened 0 screens nothing: the edits go to the evaluator (or, with maxEvaluations 0, to the gate) unscreened.
  const localScreening = (options.localScreening ?? true) && maxScreened > 0;
  // The most edits taken into the queue without local screening: what will be scored, or proposed unscored.
  const unscreenedLimit = (limit: number): number => (maxEvaluations === 0 ? limit : maxEvaluations);
  const minNetFixes = Math.max(1, options.minNetFixes ?? 1);
  const weights: Readonly<Record<string, number>> = { ...DEFAULT_WEIGHTS, ...(options.weights ?? {}) };
  const weighsPrecision = (weights.entityPrecision ?? 0) > 0;
  const weighsRelations = (weights.relationRecall ?? 0) > 0;
  return {
    id: ERROR_DRIVEN_PROPOSER_ID,
    async propose(context: ProposalContext): Promise<ProposalResult> {
      const failures: ProposalFailure[] = [];
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
      if (context.maxCandidates <= 0) return { candidates: [], failures };
      const compiled = compilePlaybook(parsed.playbook);
      const incumbentComposites = compositesById(context.incumbentScores.examples);
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

      const generated = generateEditCandidates(parsed.playbook, evidence, {
        ...(options.maxSuggestionsPerError !== undefined
          ? { maxSuggestionsPerError: options.maxSuggestionsPerError }
          : {}),
        ...(options.minCuePrecision !== undefined ? { minCuePrecision: options.minCuePrecision } : {}),
        ...(options.minCueLift !== undefined ? { minCueLift: options.minCueLift } : {}),
        precision: weighsPrecision,
        relations: weighsRelations,
      });
      const editable = new Set(context.limits.editableSections);
      // An edit already tried under the same delta (against an older incumbent) is not offered again.
      const pastDeltas = new Set(context.history.map((entry) => entry.delta));
      // A learned-lexicon bundle that nearly repeats one tried before (the same terms but one or two) is not offered either.
      const pastBundles = [...pastDeltas]
        .map(lexiconBundleTerms)
        .filter((terms): terms is Set<string> => terms !== null);
      const allowed = generated.filter(
        (candidate) =>
          (editable.size === 0 || editable.has(candidate.edit.path[0])) &&
          !pastDeltas.has(candidate.delta) &&
          !(
            candidate.kind === 'lexiconBundle' &&
            pastBundles.some((terms) => isNearDuplicateBundle(terms, lexiconBundleTerms(candidate.delta)!))
          ),
      );

      // Build each candidate text once; drop what does not apply, is too long or was tried.
      const queue: QueuedEdit[] = [];
      const seen = new Set<string>();
      let screened = 0;
      for (const candidate of evaluationOrder(allowed)) {
        if (context.signal?.aborted === true) break;
        if (localScreening ? screened >= maxScreened : queue.length >= unscreenedLimit(context.maxCandidates)) break;
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
        const local = screenLocally(candidate, compiledEdit, parsed.playbook, evidence, weights);
        if (local !== null && local.netFixes >= minNetFixes) {
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

      if (maxEvaluations === 0)
        return { candidates: unscoredCandidates(queue, context.maxCandidates, localScreening), failures };

      // The frozen evaluator decides.
      const evaluated: Evaluated[] = [];
      let evaluations = 0;
      for (const { candidate, text, playbook, compiled: compiledEdit } of queue) {
        if (evaluations >= maxEvaluations || context.signal?.aborted === true) break;
        // Cached for the evaluator, which reads the candidate next (no second parse of its text).
        if (!rememberPlaybook(text, playbook, compiledEdit).ok) continue;
        evaluations += 1;
        const score = await context.evaluateOptimization(text);
        evaluated.push(compare(candidate, text, incumbentComposites, score, context.incumbentScores.composite));
      }

      const kept = evaluated
        .filter((entry) => entry.netFixes >= minNetFixes && entry.netFixes > 0)
        .sort(compareEvaluated);
      return {
        candidates: selectDiverse(kept, context.maxCandidates, compareEvaluated).map((entry) =>
          toCandidate(entry, evaluations),
        ),
        failures,
      };
    },
  };
}
