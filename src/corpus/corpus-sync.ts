/**
 * The sync of the corpus files with the stored members at the start of a run
 * (pure): new examples, examples back in the files, anchors, examples no
 * longer in the files. The rules are src/corpus/lifecycle.ts's module
 * comment.
 *
 * @module
 */
import { InputError } from '../errors.ts';
import type { CorpusEventKind, CorpusMember, CorpusMove, FileExample, MemberPartition } from './lifecycle.ts';

/** The corpus files' examples against the stored members: the members as they must now be, and the moves that get there. */
export interface CorpusSyncPlan {
  members: CorpusMember[];
  /** Members inserted or changed (to write). */
  changed: CorpusMember[];
  moves: CorpusMove[];
  /** True when there were no members yet (a study's first run). */
  initial: boolean;
}

/**
 * Reconciles the corpus files with the stored members (pure). See the module
 * comment for the rules.
 *
 * @param at ISO 8601 time of the sync
 * @throws InputError when an anchor leaves or is re-labelled in the files, or a
 *   file example has the id of an admitted example
 */
export function planCorpusSync(
  files: readonly FileExample[],
  stored: readonly CorpusMember[],
  at: string,
): CorpusSyncPlan {
  const sync: CorpusSync = {
    byId: new Map(stored.map((member) => [member.exampleId, { ...member }])),
    changed: new Map(),
    moves: [],
    at,
  };
  const initial = stored.length === 0;
  const inFiles = new Set<string>();
  for (const fileExample of files) {
    inFiles.add(fileExample.example.id);
    const existing = sync.byId.get(fileExample.example.id);
    if (existing === undefined) syncNewExample(sync, fileExample, initial);
    else syncKnownExample(sync, fileExample, existing);
  }
  for (const member of [...sync.byId.values()]) {
    if (member.origin !== 'file' || inFiles.has(member.exampleId) || member.partition === 'removed') continue;
    if (member.partition === 'anchor') {
      throw new InputError(
        `anchor "${member.exampleId}" is no longer in the corpus files (it was in ${member.source}); anchors never leave: put it back (or first move it out with \`kloop corpus promote --to optimization\`)`,
        { file: member.source, exampleId: member.exampleId, partition: 'anchor' },
      );
    }
    moveMember(sync, member, 'removed', 'removed', `no longer in the corpus files (was in ${member.source})`, {
      file: member.source,
    });
  }
  return { members: [...sync.byId.values()], changed: [...sync.changed.values()], moves: sync.moves, initial };
}

/** The sync in progress: the members by id as they become, those changed, the moves, and the time stamped on them. */
interface CorpusSync {
  byId: Map<string, CorpusMember>;
  changed: Map<string, CorpusMember>;
  moves: CorpusMove[];
  at: string;
}

/** Moves a member into `to` with its event (entering shadow starts its shadow time; a promotion mark is dropped). */
function moveMember(
  sync: CorpusSync,
  member: CorpusMember,
  kind: CorpusEventKind,
  to: MemberPartition,
  reason: string,
  details?: Record<string, unknown>,
): void {
  const { byId, at } = sync;
  sync.moves.push({
    exampleId: member.exampleId,
    kind,
    from: byId.has(member.exampleId) ? byId.get(member.exampleId)!.partition : null,
    to,
    reason,
    ...(details !== undefined ? { details } : {}),
  });
  const entering = to === 'shadow' && member.partition !== 'shadow';
  const next: CorpusMember = {
    ...member,
    partition: to,
    updatedAt: at,
    shadowSince: entering ? at : member.shadowSince,
    ...(entering ? { shadowRounds: 0 } : {}),
  };
  delete next.promotedBy;
  byId.set(member.exampleId, next);
  sync.changed.set(member.exampleId, next);
}

/** A file example the notebook does not know: its partition when the study begins; after, shadow first (or an anchor, as the file says). */
function syncNewExample(sync: CorpusSync, { example, file }: FileExample, initial: boolean): void {
  const member: CorpusMember = {
    exampleId: example.id,
    origin: 'file',
    source: file,
    partition: 'removed',
    shadowExposures: 0,
    shadowSince: null,
    admittedAt: sync.at,
    updatedAt: sync.at,
  };
  if (initial) {
    moveMember(
      sync,
      member,
      example.partition === 'anchor' ? 'anchored' : 'initial',
      example.partition,
      `${example.partition} in ${file} when the study began`,
      { file },
    );
  } else if (example.partition === 'anchor') {
    moveMember(
      sync,
      member,
      'anchored',
      'anchor',
      `new anchor in ${file} (anchors are hand-chosen in the corpus files)`,
      {
        file,
      },
    );
  } else {
    moveMember(
      sync,
      member,
      'shadow',
      'shadow',
      `new in ${file} after the study began: shadow first (the file says ${example.partition})`,
      { file, filePartition: example.partition },
    );
  }
}

/**
 * A file example the notebook knows: its source followed, back in the files
 * (shadow first, or an anchor), newly marked an anchor.
 *
 * @throws InputError when its id is an admitted example's, or when it is an anchor the file no longer marks so
 */
function syncKnownExample(sync: CorpusSync, { example, file, line }: FileExample, existing: CorpusMember): void {
  const { byId, at } = sync;
  if (existing.origin === 'admitted') {
    throw new InputError(
      `example id "${example.id}" is also an example admitted with \`kloop corpus add\` (from ${existing.source}); ids are unique across the corpus`,
      { file, ...(line !== undefined ? { line } : {}), field: 'id', exampleId: example.id },
    );
  }
  if (existing.partition === 'anchor' && example.partition !== 'anchor' && existing.promotedBy === undefined) {
    throw new InputError(
      `example "${example.id}" is an anchor of this study and anchors never leave: restore "partition: anchor" (the file now says ${example.partition})`,
      {
        file,
        ...(line !== undefined ? { line } : {}),
        field: 'partition',
        exampleId: example.id,
        partition: 'anchor',
      },
    );
  }
  if (existing.source !== file) {
    const updated = { ...existing, source: file, updatedAt: at };
    byId.set(example.id, updated);
    sync.changed.set(example.id, updated);
  }
  const current = byId.get(example.id)!;
  if (current.partition === 'removed') {
    if (example.partition === 'anchor')
      moveMember(sync, current, 'anchored', 'anchor', `back in ${file} as an anchor`, { file });
    else
      moveMember(
        sync,
        current,
        'shadow',
        'shadow',
        `back in ${file}: shadow first (the file says ${example.partition})`,
        {
          file,
          filePartition: example.partition,
        },
      );
  } else if (example.partition === 'anchor' && current.partition !== 'anchor' && current.promotedBy === undefined) {
    moveMember(sync, current, 'anchored', 'anchor', `marked as an anchor in ${file}`, { file });
  }
}
