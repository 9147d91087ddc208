/**
 * Loop A's artifact proposals: what a Loop B round would propose from the
 * incumbent, asked through the loop's own propose phase.
 *
 * @module
 */
import type { HistoryEntry } from '../proposers/proposer.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import type { ArtifactVersion } from '../storage/registry.ts';
import { withArtifactOverride } from '../storage/registry.ts';
import { readLoopAProposalHistory } from '../storage/notebook/loop-a-store.ts';
import { askProposer } from '../loop/propose.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import { openNotebook } from '../storage/notebook/index.ts';

/**
 * The candidates a Loop B round would propose from the incumbent, asked
 * through the loop's own propose phase (`askProposer`, src/loop/propose.ts):
 * the same context (optimization partition only, the task's output
 * contract), seeded as a Loop B round would be — round = the history's
 * length, attempt 1 (`proposalSeed`), so a Loop A run proposes what it did
 * before this function used the engine's phase.
 */
export async function proposeArtifacts(
  study: LoadedStudy,
  db: StudyDatabase,
  incumbent: ArtifactVersion,
  triedByLoopA: ReadonlySet<string>,
  failures: string[],
  signal: AbortSignal | undefined,
): Promise<Array<{ text: string; delta: string; rationale: string; flags?: string[] }>> {
  const evaluator = createStudyEvaluator(study, openNotebook(db));
  const scratch = createStudyEvaluator(study);
  const incumbentScores = await evaluatePartition(evaluator, study, incumbent.text, 'optimization', signal);
  const stored = await readLoopAProposalHistory(db);
  const history: HistoryEntry[] = [
    ...stored.experiments.map((row) => ({
      delta: row.delta,
      decision: row.decision as HistoryEntry['decision'],
      reason: row.reason,
    })),
    ...stored.loopADecisions.map((row) => ({
      delta: row.delta,
      decision: row.decision === 'refused' ? ('refused' as const) : ('skipped' as const),
      reason: `loop A: ${row.reason}`,
    })),
  ];
  const triedHashes = new Set([
    ...stored.experiments.map((row) => row.candidateHash),
    ...stored.versionHashes,
    ...triedByLoopA,
  ]);
  try {
    const proposal = await askProposer({
      study,
      base: incumbent,
      baseOptimization: incumbentScores,
      prior: { history, deltas: history.map((entry) => entry.delta), triedHashes, failedEvaluations: new Map() },
      round: history.length,
      attempt: 1,
      evaluateOptimization: (text) =>
        withArtifactOverride(text, () =>
          scratch.evaluate({
            artifactText: text,
            partition: 'optimization',
            examples: study.partitions.optimization,
            repeats: study.gate.repeats,
          }),
        ),
      ...(signal !== undefined ? { signal } : {}),
    });
    failures.push(...proposal.failures.map((failure) => failure.reason));
    return proposal.candidates;
  } catch (error) {
    if (signal?.aborted) throw error;
    failures.push(`the proposer failed: ${error instanceof Error ? error.message : String(error)}`);
    return [];
  }
}
