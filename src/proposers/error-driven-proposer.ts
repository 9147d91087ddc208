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
import type { IntentExample } from '../corpus/example.ts';
import { asIntentExamples } from '../corpus/example.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import type { CompiledPlaybook } from '../tasks/intent/offline/extract.ts';
import { compilePlaybook, extractIntent } from '../tasks/intent/offline/extract.ts';
import type { EditCandidate, EditKind, ExampleEvidence } from '../tasks/intent/offline/edit-candidates.ts';
import {
  editMayAffect,
  generateEditCandidates,
  isNearDuplicateBundle,
  lexiconBundleTerms,
} from '../tasks/intent/offline/edit-candidates.ts';
import { analyzeGoal } from '../tasks/intent/offline/goal-analysis.ts';
import type { Playbook } from '../tasks/intent/offline/playbook.ts';
import { parsePlaybook } from '../tasks/intent/offline/playbook.ts';
import { rememberPlaybook } from '../tasks/intent/offline/playbook-cache.ts';
import type { ExampleDiagnostics } from '../tasks/intent/scorer.ts';
import { DEFAULT_WEIGHTS } from '../tasks/intent/scorer.ts';
import { intentTask } from '../tasks/intent/intent-task.ts';
import type { PlaybookEdit } from '../tasks/intent/offline/playbook-edit.ts';
import { applyPlaybookEdit, editPlaybook } from '../tasks/intent/offline/playbook-edit.ts';
import type { Candidate, ProposalContext, ProposalFailure, ProposalResult, Proposer } from './proposer.ts';
import { selectDiverse } from './select-diverse.ts';

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

/** Kinds interleaved in this order when choosing what to evaluate; projection edits come last. */
const KIND_ORDER: readonly EditKind[] = [
  'lexiconBundle',
  'appTypeCue',
  'entityCap',
  'entityTerm',
  'role',
  'behaviorCue',
  'entityAlias',
  'appTypeWeight',
  'appTypeCueRemoval',
  'stopListRemoval',
  'aliasRemoval',
  'roleSuffix',
  'appTypeDefault',
  'stopWord',
  'termRemoval',
  'compoundPolicy',
  'salienceFloor',
  'attributeRemoval',
  'attributeTerm',
  'relationCue',
  'cardinalityCue',
  'nounCategory',
  'countability',
  'layout',
];

interface Evaluated {
  candidate: EditCandidate;
  text: string;
  netFixes: number;
  rose: number;
  fell: number;
  gain: number;
  fixedIds: Set<string>;
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

/** An edit built and (when screening) screened, waiting for the evaluator. */
interface QueuedEdit {
  candidate: EditCandidate;
  text: string;
  /** The edit's validated playbook (`editPlaybook`): what a parse of `text` gives. */
  playbook: Playbook;
  /** Its compiled form, when screening compiled it. */
  compiled?: CompiledPlaybook;
  local: number;
  localGain: number;
  relationNet: number;
}

/** Evidence plus what local screening compares against. */
interface LocalEvidence extends ExampleEvidence {
  /** The incumbent's output, serialised. */
  outputJson: string;
  /** The incumbent's composite on this example (from the evaluator's record). */
  composite: number;
  /** The incumbent's relation recall on this example (null when the gold has no relations). */
  relationRecall: number | null;
}

function toEvidence(
  example: IntentExample,
  record: ExampleScoreRecord & { valid: true },
  compiled: ReturnType<typeof compilePlaybook>,
): LocalEvidence {
  const analysis = analyzeGoal(example.input);
  const { intent, trace } = extractIntent(compiled, analysis);
  return {
    id: example.id,
    expected: example.expected,
    analysis,
    trace,
    predictedAppType: intent.appType,
    predictedEntityCount: intent.entities.length,
    // An intent study's records hold the intent scorer's diagnostics and metrics (src/tasks/intent/scorer.ts).
    diagnostics: record.diagnostics as ExampleDiagnostics,
    outputJson: JSON.stringify(intent),
    composite: record.composite,
    relationRecall: record.metrics.relationRecall ?? null,
  };
}

/**
 * Reruns the offline extractor with the candidate playbook on the examples the
 * edit can touch and scores the outputs that changed. Null when the candidate
 * changes no output (it cannot fix anything).
 */
function screenLocally(
  candidate: EditCandidate,
  compiled: CompiledPlaybook,
  playbook: Playbook,
  evidence: readonly LocalEvidence[],
  weights: Readonly<Record<string, number>>,
): { netFixes: number; gain: number; relationNetFixes: number } | null {
  let changed = 0;
  let netFixes = 0;
  let relationNetFixes = 0;
  let gain = 0;
  for (const example of evidence) {
    if (!editMayAffect(candidate.edit, playbook, example)) continue;
    const { intent } = extractIntent(compiled, example.analysis);
    if (JSON.stringify(intent) === example.outputJson) continue;
    changed += 1;
    const score = intentTask.score(intent, example.expected, '', weights);
    const composite = score.composite;
    if (composite > example.composite + EPSILON) netFixes += 1;
    else if (composite < example.composite - EPSILON) netFixes -= 1;
    const relationRecall = score.metrics?.relationRecall ?? null;
    if (relationRecall !== null && example.relationRecall !== null) {
      if (relationRecall > example.relationRecall + EPSILON) relationNetFixes += 1;
      else if (relationRecall < example.relationRecall - EPSILON) relationNetFixes -= 1;
    }
    gain += composite - example.composite;
  }
  return changed === 0 ? null : { netFixes, gain: gain / Math.max(1, evidence.length), relationNetFixes };
}

/** Mean composite of each example over its valid repeats; null when no repeat was valid. */
function compositesById(records: readonly ExampleScoreRecord[]): Map<string, number | null> {
  const sums = new Map<string, { sum: number; valid: number }>();
  for (const record of records) {
    const entry = sums.get(record.exampleId) ?? { sum: 0, valid: 0 };
    if (record.valid) {
      entry.sum += record.composite;
      entry.valid += 1;
    }
    sums.set(record.exampleId, entry);
  }
  const result = new Map<string, number | null>();
  for (const [id, entry] of sums) result.set(id, entry.valid === 0 ? null : entry.sum / entry.valid);
  return result;
}

const EPSILON = 1e-9;

function compare(
  candidate: EditCandidate,
  text: string,
  incumbent: Map<string, number | null>,
  score: PartitionScore,
  incumbentComposite: number | null,
): Evaluated {
  const after = compositesById(score.examples);
  let rose = 0;
  let fell = 0;
  const fixedIds = new Set<string>();
  for (const [id, before] of incumbent) {
    const now = after.get(id) ?? null;
    if (before === null && now === null) continue;
    if (before === null || (now !== null && now > before + EPSILON)) {
      rose += 1;
      fixedIds.add(id);
    } else if (now === null || now < before - EPSILON) {
      fell += 1;
    }
  }
  return {
    candidate,
    text,
    netFixes: rose - fell,
    rose,
    fell,
    gain: (score.composite ?? 0) - (incumbentComposite ?? 0),
    fixedIds,
  };
}

/** Round-robin over edit kinds (each kind in preRank order): positive priors first, then the rest, projections last. */
function evaluationOrder(candidates: readonly EditCandidate[]): EditCandidate[] {
  const order: EditCandidate[] = [];
  for (const positive of [true, false]) {
    const queues = KIND_ORDER.map((kind) =>
      candidates.filter((candidate) => candidate.kind === kind && candidate.preRank > 0 === positive),
    );
    for (let index = 0; queues.some((queue) => index < queue.length); index += 1) {
      for (const queue of queues) {
        const candidate = queue[index];
        if (candidate !== undefined) order.push(candidate);
      }
    }
  }
  order.push(...candidates.filter((candidate) => candidate.kind === 'projection'));
  return order;
}

function toCandidate(entry: Evaluated, evaluations: number): Candidate {
  const { candidate } = entry;
  const edit: PlaybookEdit = candidate.edit;
  return {
    text: entry.text,
    delta: candidate.delta,
    rationale:
      `Raises the composite on ${entry.rose} optimization example(s) and lowers it on ${entry.fell} ` +
      `(net ${entry.netFixes}, mean gain ${entry.gain.toFixed(4)}); suggested by ${candidate.sources.size} failing example(s) ` +
      `(${candidate.kind}); best of ${evaluations} single edits evaluated this round.`,
    expectedNetFixes: entry.netFixes,
    rebase: (incumbentText: string): string | null => {
      const rebased = applyPlaybookEdit(incumbentText, edit);
      return rebased === null || rebased === incumbentText ? null : rebased;
    },
  };
}

/**
 * The candidates of `maxEvaluations: 0`: the first `limit` of the queue (best
 * local screening first, or in generation order without it) that are
 * readable playbooks, none scored by the evaluator.
 */
function unscoredCandidates(queue: readonly QueuedEdit[], limit: number, screened: boolean): Candidate[] {
  const candidates: Candidate[] = [];
  for (const { candidate, text, playbook, compiled, local } of queue) {
    if (candidates.length >= limit) break;
    if (!rememberPlaybook(text, playbook, compiled).ok) continue;
    const edit: PlaybookEdit = candidate.edit;
    candidates.push({
      text,
      delta: candidate.delta,
      rationale: screened
        ? `Raises the composite on net ${local} optimization example(s) in local screening; suggested by ${candidate.sources.size} failing example(s) (${candidate.kind}); not scored by the proposer (proposer.maxEvaluations 0).`
        : `Suggested by ${candidate.sources.size} failing example(s) (${candidate.kind}); neither screened locally nor scored by the proposer (proposer.maxEvaluations 0).`,
      ...(screened ? { expectedNetFixes: local } : {}),
      rebase: (incumbentText: string): string | null => {
        const rebased = applyPlaybookEdit(incumbentText, edit);
        return rebased === null || rebased === incumbentText ? null : rebased;
      },
    });
  }
  return candidates;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Best net fixes first, then the larger mean gain, then the delta as text (a stable order). */
function compareEvaluated(a: Evaluated, b: Evaluated): number {
  return b.netFixes - a.netFixes || b.gain - a.gain || compareText(a.candidate.delta, b.candidate.delta);
}
