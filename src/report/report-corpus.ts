/**
 * The corpus as the study report shows it (src/report/report.ts): partition
 * sizes, where the corpus stood when a run began, the graduations and
 * rotations since, and the partitions on which the best artifact scores
 * below the seed.
 */
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { readCorpusMovesSince, readLastCorpusEventId } from '../storage/notebook/report-queries.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import type { BelowBaseline, CorpusMark, CorpusMoveSummary, PartitionSizes } from './report-types.ts';

/** Examples per partition of the study as it stands. */
export function partitionSizes(study: LoadedStudy): PartitionSizes {
  return Object.fromEntries(PARTITIONS.map((name) => [name, study.partitions[name].length])) as PartitionSizes;
}

/**
 * Marks where the study's corpus stands at the start of a run (after
 * `startCorpusLifecycle`): the report lists the graduations and rotations
 * recorded after it, and the partition sizes then.
 */
export async function markCorpus(db: StudyDatabase, study: LoadedStudy): Promise<CorpusMark> {
  return { sizes: partitionSizes(study), lastEventId: await readLastCorpusEventId(db) };
}

/** The graduations and rotations recorded after event `afterEventId`, one entry per round boundary. */
export async function corpusMovesSince(db: StudyDatabase, afterEventId: number): Promise<CorpusMoveSummary[]> {
  const rows = await readCorpusMovesSince(db, afterEventId, ['graduated', 'rotated_out']);
  const moves: CorpusMoveSummary[] = [];
  for (const row of rows) {
    const last = moves.at(-1);
    const kind = row.kind as CorpusMoveSummary['kind'];
    if (
      last !== undefined &&
      last.kind === kind &&
      last.afterExperiment === row.experimentId &&
      last.at === row.createdAt
    ) {
      if (row.exampleId !== null) last.exampleIds.push(row.exampleId);
      continue;
    }
    moves.push({
      kind,
      from: 'shadow',
      to: 'optimization',
      exampleIds: row.exampleId === null ? [] : [row.exampleId],
      afterExperiment: row.experimentId,
      at: row.createdAt,
    });
  }
  return moves;
}

/** The partitions on which `best` scores below `baseline` (both composites known). */
export function partitionsBelowBaseline(
  baseline: Record<PartitionName, number | null>,
  best: Record<PartitionName, number | null>,
): BelowBaseline[] {
  const below: BelowBaseline[] = [];
  for (const partition of PARTITIONS) {
    const seed = baseline[partition];
    const found = best[partition];
    // Composites of the same evaluations are equal to the last bit: only a real difference counts.
    if (seed === null || found === null || !(found < seed - 1e-12)) continue;
    below.push({ partition, baseline: seed, best: found, delta: found - seed });
  }
  return below;
}
