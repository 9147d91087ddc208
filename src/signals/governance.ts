/**
 * Governance of Loop C and Loop D findings: evidence goes to a human, never
 * to the active artifact (DESIGN.md §5, "evidence and acceptance stay
 * apart").
 *
 * - Candidate patterns (valid drafts only) → the review queue, kind
 *   `pattern`, source `loop-c` or `loop-d`; approval writes the YAML into the
 *   study's `patterns/` folder.
 * - Candidate examples (Loop C) → corpus admission when the caller gives an
 *   `admitExample` hook *and* the example has complete gold (entities with
 *   roles); admission puts it in the shadow partition first. Every other
 *   candidate example — mined examples carry partial gold tagged
 *   `needs-gold`, and any example admission could not take just now — is
 *   queued for review, kind `example`, where a person completes the gold
 *   before approving it into admission.
 *
 * Nothing here writes the prompt registry or `artifact_versions`. The review
 * queue is idempotent by content, so running the slow loop again does not
 * queue the same finding twice (nor one already rejected).
 */
import type { IntentExample } from '../corpus/intent-example.ts';
import { intentRecord } from '../corpus/intent-example.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { enqueueReviewItem } from '../review/review-queue.ts';
import type { MiningReport } from './mining.ts';
import type { SignalReport } from './signal-report.ts';

/** Corpus admission of one example (shadow first): accepted, or refused with a reason. */
export type AdmitExample = (example: IntentExample) => Promise<{ admitted: boolean; reason?: string }>;

/** Options of the enqueue functions. */
export interface EnqueueFindingsOptions {
  now?: () => Date;
  /** Run id to attach to the review items. */
  runId?: number | null;
  /** Corpus admission for complete examples (Loop C); absent → every example is queued for review. */
  admitExample?: AdmitExample;
}

/** What the enqueue functions did. */
export interface EnqueueFindingsResult {
  /** Review items newly queued. */
  queued: number;
  /** Findings already on the queue (pending or decided): not queued again. */
  alreadyQueued: number;
  /** Examples admitted to the corpus (shadow first). */
  admitted: number;
  /** Findings skipped, with why (e.g. an invalid draft). */
  skipped: Array<{ finding: string; reason: string }>;
  /** Ids of the review items concerned (new and existing). */
  itemIds: number[];
}

function emptyResult(): EnqueueFindingsResult {
  return { queued: 0, alreadyQueued: 0, admitted: 0, skipped: [], itemIds: [] };
}

/** Sends the candidate patterns of a Loop D report to the review queue. */
export async function enqueueSignalFindings(
  db: StudyDatabase,
  report: SignalReport,
  options: EnqueueFindingsOptions = {},
): Promise<EnqueueFindingsResult> {
  const result = emptyResult();
  for (const candidate of report.candidatePatterns) {
    if (candidate.draft === null) {
      result.skipped.push({
        finding: candidate.clusterKey,
        reason: 'no pattern could be drafted (no typical uncovered entity, no pattern to extend)',
      });
      continue;
    }
    if (!candidate.draft.valid) {
      result.skipped.push({
        finding: candidate.clusterKey,
        reason: `the draft does not load as a pattern: ${candidate.draft.issues.join('; ')}`,
      });
      continue;
    }
    const cluster = report.clusters.find((entry) => entry.key === candidate.clusterKey);
    const { item, created } = await enqueueReviewItem(
      db,
      {
        kind: 'pattern',
        source: 'loop-d',
        title: `Loop D: candidate pattern ${candidate.draft.id} for low-confidence ${candidate.clusterKey} assemblies (${candidate.size} signals)`,
        payload: { name: candidate.draft.id, yaml: candidate.draft.yaml },
        evidence: {
          window: report.window,
          cluster,
          typicalUncoveredEntities: candidate.entities,
          typicalUncoveredBehaviors: candidate.behaviors,
          extends: candidate.extends,
          guessedRoles: candidate.draft.guessedRoles,
        },
        runId: options.runId ?? null,
      },
      options.now,
    );
    record(result, item.id, created);
  }
  return result;
}

function record(result: EnqueueFindingsResult, id: number, created: boolean): void {
  if (created) result.queued += 1;
  else result.alreadyQueued += 1;
  result.itemIds.push(id);
}

/** Whether an example's gold is complete enough for admission without a person: entities with roles. */
export function hasCompleteGold(example: IntentExample): boolean {
  const entities = example.expected.entities ?? [];
  return (
    example.expected.appType !== undefined &&
    entities.length > 0 &&
    entities.every((entity) => entity.role !== undefined)
  );
}

/** Sends the candidate patterns and examples of a Loop C report to the review queue (or admission). */
export async function enqueueMiningFindings(
  db: StudyDatabase,
  report: MiningReport,
  options: EnqueueFindingsOptions = {},
): Promise<EnqueueFindingsResult> {
  const result = emptyResult();
  for (const candidate of report.candidatePatterns) {
    if (!candidate.draft.valid) {
      result.skipped.push({
        finding: candidate.shapeKey,
        reason: `the draft does not load as a pattern: ${candidate.draft.issues.join('; ')}`,
      });
      continue;
    }
    const shape = report.shapes.find((entry) => entry.key === candidate.shapeKey);
    const { item, created } = await enqueueReviewItem(
      db,
      {
        kind: 'pattern',
        source: 'loop-c',
        title: `Loop C: candidate pattern ${candidate.draft.id} for the shape ${candidate.shapeKey}`,
        payload: { name: candidate.draft.id, yaml: candidate.draft.yaml },
        evidence: { shape, ...candidate.evidence, guessedRoles: candidate.draft.guessedRoles },
        runId: options.runId ?? null,
      },
      options.now,
    );
    record(result, item.id, created);
  }
  for (const candidate of report.candidateExamples) {
    let admissionError: string | undefined;
    if (options.admitExample !== undefined && hasCompleteGold(candidate.example)) {
      try {
        const admission = await options.admitExample(candidate.example);
        if (admission.admitted) {
          result.admitted += 1;
          continue;
        }
        result.skipped.push({
          finding: candidate.example.id,
          reason: `admission refused it: ${admission.reason ?? 'no reason given'}`,
        });
        continue;
      } catch (error) {
        // Admission could not run now (e.g. a round is open): a person decides instead.
        admissionError = error instanceof Error ? error.message : String(error);
      }
    }
    const shape = report.shapes.find((entry) => entry.key === candidate.shapeKey);
    const { item, created } = await enqueueReviewItem(
      db,
      {
        kind: 'example',
        source: 'loop-c',
        title: `Loop C: candidate example ${candidate.example.id} for the thin shape ${candidate.shapeKey} (complete the gold before approving)`,
        payload: { example: intentRecord(candidate.example) as unknown as Record<string, unknown> },
        evidence: { shape, signalId: candidate.signalId, ...(admissionError !== undefined ? { admissionError } : {}) },
        runId: options.runId ?? null,
      },
      options.now,
    );
    record(result, item.id, created);
  }
  return result;
}
