/**
 * What the error-driven proposer (./error-driven-proposer.ts) reads and
 * builds around its scorings: the evidence of each optimization example, the
 * local screening of queued edits, the order edits are evaluated in (kinds
 * interleaved), the outcome of a scored edit against the incumbent, and the
 * candidates with their rationales.
 */
import type { IntentExample } from '../corpus/intent-example.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import type { CompiledPlaybook } from '../tasks/intent/offline/extract.ts';
import { type compilePlaybook, extractIntent } from '../tasks/intent/offline/extract.ts';
import type { EditCandidate, EditKind, ExampleEvidence } from '../tasks/intent/offline/edit-candidates.ts';
import { editMayAffect } from '../tasks/intent/offline/edit-candidates.ts';
import { analyzeGoal } from '../tasks/intent/offline/goal-analysis.ts';
import type { Playbook } from '../tasks/intent/offline/playbook.ts';
import type { ExampleDiagnostics } from '../tasks/intent/scorer.ts';
import { intentTask } from '../tasks/intent/intent-task.ts';
import { rememberPlaybook } from '../tasks/intent/offline/playbook-cache.ts';
import type { PlaybookEdit } from '../tasks/intent/offline/playbook-edit.ts';
import { applyPlaybookEdit } from '../tasks/intent/offline/playbook-edit.ts';
import type { Candidate } from './proposer.ts';

/** Kinds interleaved in this order when choosing what to evaluate; projection edits come last. */
export const KIND_ORDER: readonly EditKind[] = [
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

export interface Evaluated {
  candidate: EditCandidate;
  text: string;
  netFixes: number;
  rose: number;
  fell: number;
  gain: number;
  fixedIds: Set<string>;
}

/** An edit built and (when screening) screened, waiting for the evaluator. */
export interface QueuedEdit {
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
export interface LocalEvidence extends ExampleEvidence {
  /** The incumbent's output, serialised. */
  outputJson: string;
  /** The incumbent's composite on this example (from the evaluator's record). */
  composite: number;
  /** The incumbent's relation recall on this example (null when the gold has no relations). */
  relationRecall: number | null;
}

export function toEvidence(
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
export function screenLocally(
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
export function compositesById(records: readonly ExampleScoreRecord[]): Map<string, number | null> {
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

export function compare(
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
export function evaluationOrder(candidates: readonly EditCandidate[]): EditCandidate[] {
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

export function toCandidate(entry: Evaluated, evaluations: number): Candidate {
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
export function unscoredCandidates(queue: readonly QueuedEdit[], limit: number, screened: boolean): Candidate[] {
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

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Best net fixes first, then the larger mean gain, then the delta as text (a stable order). */
export function compareEvaluated(a: Evaluated, b: Evaluated): number {
  return b.netFixes - a.netFixes || b.gain - a.gain || compareText(a.candidate.delta, b.candidate.delta);
}
