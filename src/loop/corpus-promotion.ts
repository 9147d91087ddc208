/**
 * `kloop corpus promote`: a human places examples in a partition, on the
 * record (DESIGN §3, §4).
 *
 * @module
 */
import type { PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import type { CorpusEvent, CorpusMember, CorpusMove } from '../corpus/lifecycle.ts';
import { MIN_SHADOW_EXAMPLES, applyMoves, resolveCorpus } from '../corpus/lifecycle.ts';
import {
  lastExperimentId,
  readCorpusEvents,
  readCorpusMembers,
  writeMembers,
  writeMoves,
} from '../corpus/lifecycle-store.ts';
import { InputError } from '../errors.ts';
import type { LoadedStudy } from './loaded-study.ts';
import { applyCorpusState, planFileSync, refuseWhileRoundOpen } from './corpus-sync.ts';
import type { Notebook } from '../storage/notebook/index.ts';

/** The outcome of `kloop corpus promote`. */
export interface PromotionOutcome {
  to: PartitionName;
  by: string;
  /** The examples moved, from where. */
  moved: Array<{ id: string; from: PartitionName; to: PartitionName }>;
  /** The examples already in `to` (nothing recorded for them). */
  unchanged: string[];
  /** Consequences the user should know (a seen example in shadow, a shadow below the minimum). */
  warnings: string[];
  sizes: Record<PartitionName, number>;
}

/**
 * `kloop corpus promote`: a human places examples in a partition, on the
 * record. Each move is a `promoted` event with `details.by` (and the reason
 * given); the files' labels do not override it afterwards (a promoted anchor
 * stays one though its file says otherwise; an anchor moved out stays out).
 * Promoting again reverses it, also on the record. Entering shadow restarts
 * its time there (exposures are kept: the novelty it spent is spent). The
 * files are synced first, in the same transaction.
 *
 * @throws InputError while a round is open; for an id that is not in the
 *   study's corpus (nothing is written), or when the move would leave a
 *   partition empty
 */
export async function promoteExamples(
  notebook: Notebook,
  study: LoadedStudy,
  ids: readonly string[],
  options: PromotionOptions,
): Promise<PromotionOutcome> {
  await refuseWhileRoundOpen(notebook, study, 'move examples between runs');
  const now = options.now ?? (() => new Date());
  const outcome = await notebook.transaction(async (transaction) => {
    const at = now().toISOString();
    // Records new to the corpus files stay pending: a run admits them, and says so (a promotion used to admit them unreported).
    const sync = planFileSync(study, await readCorpusMembers(transaction), at, { deferNew: true });
    const byId = new Map(sync.members.map((member) => [member.exampleId, member]));
    const unknown = [...new Set(ids)].filter(
      (id) => byId.get(id) === undefined || byId.get(id)!.partition === 'removed',
    );
    if (unknown.length > 0) {
      throw new InputError(
        `not in this study's corpus: ${unknown.map((id) => `"${id}"${byId.get(id)?.partition === 'removed' ? ' (removed from the corpus files)' : ''}`).join(', ')}; nothing was moved (see \`kloop corpus status\`)`,
        { field: '<id>', studyPath: study.dir },
      );
    }
    const { moves, unchanged, warnings } = promotionMoves(byId, ids, await readCorpusEvents(transaction), options);
    const after = applyMoves(sync.members, moves, at);
    const resolved = resolveCorpus(sync.files, after);
    warnings.push(...partitionsAfterPromotion(resolved.partitions, moves, study));
    const experimentId = await lastExperimentId(transaction);
    if (sync.changed.length > 0) await writeMembers(transaction, sync.changed);
    if (sync.moves.length > 0) await writeMoves(transaction, sync.moves, experimentId, at);
    const movedIds = new Set(moves.map((move) => move.exampleId));
    await writeMembers(
      transaction,
      after.filter((member) => movedIds.has(member.exampleId)),
    );
    await writeMoves(transaction, moves, experimentId, at);
    const sizes = Object.fromEntries(PARTITIONS.map((name) => [name, resolved.partitions[name].length])) as Record<
      PartitionName,
      number
    >;
    return {
      to: options.to,
      by: options.by,
      moved: moves.map((move) => ({ id: move.exampleId!, from: move.from as PartitionName, to: options.to })),
      unchanged,
      warnings,
      sizes,
      after,
    };
  });
  applyCorpusState(study, outcome.after);
  const { after: _after, ...result } = outcome;
  return result;
}

/** What {@link promoteExamples} takes beside the ids: the partition, who moves them and why. */
export interface PromotionOptions {
  to: PartitionName;
  by: string;
  reason?: string;
  now?: () => Date;
}

/**
 * The `promoted` moves of `ids` (each id once, in order; members known),
 * the ids already in `options.to`, and the warning for each example moved
 * into shadow that the proposer has seen (now in optimization, or once
 * moved there per `history`).
 */
function promotionMoves(
  byId: ReadonlyMap<string, CorpusMember>,
  ids: readonly string[],
  history: readonly CorpusEvent[],
  options: PromotionOptions,
): { moves: CorpusMove[]; unchanged: string[]; warnings: string[] } {
  const moves: CorpusMove[] = [];
  const unchanged: string[] = [];
  const warnings: string[] = [];
  for (const id of [...new Set(ids)]) {
    const member = byId.get(id)!;
    const from = member.partition as PartitionName;
    if (from === options.to) {
      unchanged.push(id);
      continue;
    }
    const seen =
      from === 'optimization' || history.some((event) => event.exampleId === id && event.to === 'optimization');
    if (options.to === 'shadow' && seen)
      warnings.push(
        `"${id}" has been in the optimization partition, which the proposer reads: as a shadow example it is no longer unseen`,
      );
    moves.push({
      exampleId: id,
      kind: 'promoted',
      from,
      to: options.to,
      reason: `moved from ${from} to ${options.to} by ${options.by}${options.reason !== undefined ? `: ${options.reason}` : ''}`,
      details: {
        by: options.by,
        ...(options.reason !== undefined ? { reason: options.reason } : {}),
        exposures: member.shadowExposures,
        seenByProposer: seen,
      },
    });
  }
  return { moves, unchanged, warnings };
}

/**
 * The partitions a promotion leaves, checked: the warning for a shadow below
 * {@link MIN_SHADOW_EXAMPLES} that the moves took examples from (none else).
 *
 * @throws InputError when a partition is left empty (nothing is moved)
 */
function partitionsAfterPromotion(
  partitions: Readonly<Record<PartitionName, readonly unknown[]>>,
  moves: readonly CorpusMove[],
  study: LoadedStudy,
): string[] {
  for (const name of PARTITIONS) {
    if (partitions[name].length === 0)
      throw new InputError(
        `moving ${moves.map((move) => move.exampleId).join(', ')} would leave the ${name} partition empty; nothing was moved`,
        { field: '--to', studyPath: study.dir, partition: name },
      );
  }
  if (partitions.shadow.length < MIN_SHADOW_EXAMPLES && moves.some((move) => move.from === 'shadow')) {
    return [
      `the shadow partition now holds ${partitions.shadow.length} (< ${MIN_SHADOW_EXAMPLES}): too few paired differences to confirm a gain`,
    ];
  }
  return [];
}
