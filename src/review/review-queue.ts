/**
 * The review queue: changes and findings that wait for a human decision.
 *
 * Loop A sends the candidates that pass its gate here instead of activating
 * them (its acceptance is human); Loops C and D enqueue candidate patterns
 * and examples they find. Nothing is applied until a named person approves:
 *
 * - an `artifact` item is activated through the prompt registry
 *   (`putVersion` + `setRegistryVersion`, reason
 *   `review item N approved by NAME`);
 * - a `pattern` item's YAML is validated (schema, and no id clash with the
 *   library) and written atomically into the study's `patterns/` folder,
 *   which the runtime loads beside the built-in library; an invalid one is
 *   refused (`invalid_payload`) and stays pending;
 * - an `example` item is handed to an `admitExample` hook when the caller
 *   gives one (corpus admission, shadow first), else written as JSON to
 *   `<study>/review/examples/<id>.json` for admission (in the public corpus
 *   format: `kloop corpus add <study> <file>` takes it as it stands).
 *
 * Every decision records who (a name the user gives), when, and an optional
 * note; a decided item is never decided again.
 *
 * @example
 * ```ts
 * import { enqueueReviewItem, approveReviewItem } from './review-queue.ts';
 * const { item } = await enqueueReviewItem(db, {
 *   kind: 'pattern', source: 'loop-c', title: 'pattern for kennel booking',
 *   payload: { name: 'kennel', yaml: 'id: kennel\n...' }, evidence: { clusterSize: 7 },
 * });
 * await approveReviewItem(db, item.id, { by: 'ana', studyDir: '/path/to/study' });
 * ```
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { contentHash } from '../artifact/content-hash.ts';
import { loadPatternLibrary, parsePatternText, formatPatternIssue } from '../assembly/pattern-library.ts';
import { InputError } from '../errors.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { isoNow } from '../storage/study-database.ts';
import type { ReviewItem, ReviewItemKind, ReviewItemSource } from '../storage/notebook/review-store.ts';
import {
  findReviewItemByHash,
  getReviewItem,
  inReviewTransaction,
  insertReviewItem,
  recordReviewDecision,
  REVIEW_ITEM_KINDS,
  REVIEW_ITEM_SOURCES,
} from '../storage/notebook/review-store.ts';
import { getRegistryVersion, putVersion, setRegistryVersion } from '../storage/registry.ts';
import { sync as writeFileAtomic } from 'write-file-atomic';

export type {
  ListReviewItemsOptions,
  ReviewItem,
  ReviewItemKind,
  ReviewItemSource,
  ReviewItemStatus,
} from '../storage/notebook/review-store.ts';
export {
  getReviewItem,
  listReviewItems,
  REVIEW_ITEM_KINDS,
  REVIEW_ITEM_SOURCES,
  REVIEW_ITEM_STATUSES,
} from '../storage/notebook/review-store.ts';

/** A new artifact version to activate. */
export interface ArtifactReviewPayload {
  /** Full text of the candidate artifact. */
  text: string;
  /** Registry version the candidate was derived from. */
  baseVersionId?: number | null;
  /** The changed text only. */
  delta?: string;
  rationale?: string;
}

/** A pattern to add to the study's `patterns/` folder. */
export interface PatternReviewPayload {
  /** Pattern id; the file written is `patterns/<name>.yaml`. Letters, digits, `-`, `_`. */
  name: string;
  /** The pattern file's YAML text (format in `src/assembly/pattern.ts`). */
  yaml: string;
}

/** An example (public example format, `src/corpus/example.ts`) for corpus admission. */
export interface ExampleReviewPayload {
  example: Record<string, unknown>;
}

interface NewReviewItemCommon {
  source: ReviewItemSource;
  /** One line a reviewer reads in the list. */
  title: string;
  /** Why it was proposed: scores, counts, clusters (any JSON). */
  evidence?: unknown;
  /** The run that proposed it, when there is one. */
  runId?: number | null;
}

/** What {@link enqueueReviewItem} takes: one item per kind, with its payload. */
export type NewReviewItem =
  | (NewReviewItemCommon & { kind: 'artifact'; payload: ArtifactReviewPayload })
  | (NewReviewItemCommon & { kind: 'pattern'; payload: PatternReviewPayload })
  | (NewReviewItemCommon & { kind: 'example'; payload: ExampleReviewPayload });

const PATTERN_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/;

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${stableJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The dedupe key of an item: what approval would apply, not why it was proposed. */
export function reviewItemHash(
  kind: ReviewItemKind,
  payload: ArtifactReviewPayload | PatternReviewPayload | ExampleReviewPayload,
): string {
  switch (kind) {
    case 'artifact':
      return contentHash(`artifact\n${(payload as ArtifactReviewPayload).text}`);
    case 'pattern':
      return contentHash(
        `pattern\n${(payload as PatternReviewPayload).name}\n${(payload as PatternReviewPayload).yaml}`,
      );
    case 'example':
      return contentHash(`example\n${stableJson((payload as ExampleReviewPayload).example)}`);
  }
}

function validateNewItem(item: NewReviewItem): void {
  if (!(REVIEW_ITEM_KINDS as readonly string[]).includes(item.kind)) {
    throw new InputError(`unknown review item kind "${String(item.kind)}" (one of ${REVIEW_ITEM_KINDS.join(', ')})`, {
      field: 'kind',
    });
  }
  if (!(REVIEW_ITEM_SOURCES as readonly string[]).includes(item.source)) {
    throw new InputError(
      `unknown review item source "${String(item.source)}" (one of ${REVIEW_ITEM_SOURCES.join(', ')})`,
      { field: 'source' },
    );
  }
  if (typeof item.title !== 'string' || item.title.trim() === '')
    throw new InputError('a review item needs a title', { field: 'title' });
  const payload = item.payload as unknown as Record<string, unknown>;
  if (payload === null || typeof payload !== 'object')
    throw new InputError('a review item needs a payload object', { field: 'payload' });
  if (item.kind === 'artifact' && (typeof payload.text !== 'string' || payload.text.trim() === '')) {
    throw new InputError('an artifact review item needs payload.text', { field: 'payload.text' });
  }
  if (item.kind === 'pattern') {
    if (typeof payload.name !== 'string' || !PATTERN_NAME.test(payload.name)) {
      throw new InputError('a pattern review item needs payload.name (letters, digits, "-", "_")', {
        field: 'payload.name',
      });
    }
    if (typeof payload.yaml !== 'string' || payload.yaml.trim() === '') {
      throw new InputError('a pattern review item needs payload.yaml', { field: 'payload.yaml' });
    }
  }
  if (
    item.kind === 'example' &&
    (payload.example === null || typeof payload.example !== 'object' || Array.isArray(payload.example))
  ) {
    throw new InputError('an example review item needs payload.example (an object)', { field: 'payload.example' });
  }
}

/** The result of {@link enqueueReviewItem}: the item, and whether it is new. */
export interface EnqueueResult {
  item: ReviewItem;
  /** False when an item with the same kind and payload was already queued (pending or decided). */
  created: boolean;
}

/**
 * Puts an item on the review queue. Idempotent by content: an item whose
 * kind and payload equal an earlier one (pending, approved or rejected) is
 * not queued again; the earlier item is returned with `created: false`.
 *
 * @throws InputError when the kind, source, title or payload is malformed
 */
export async function enqueueReviewItem(
  db: StudyDatabase,
  item: NewReviewItem,
  now: () => Date = () => new Date(),
): Promise<EnqueueResult> {
  validateNewItem(item);
  const hash = reviewItemHash(item.kind, item.payload);
  const existing = await findReviewItemByHash(db, hash);
  if (existing !== undefined) return { item: existing, created: false };
  const created = await insertReviewItem(db, {
    kind: item.kind,
    source: item.source,
    title: item.title.trim(),
    payload: item.payload,
    evidence: item.evidence ?? {},
    contentHash: hash,
    runId: item.runId ?? null,
    createdAt: isoNow(now),
  });
  return { item: created, created: true };
}

/** Who decides, and how an approval is applied. */
export interface ReviewDecisionOptions {
  /** The reviewer's name, as the user gives it. Required, non-empty. */
  by: string;
  note?: string;
  /** Study folder: needed to approve pattern items (and example items without `admitExample`). */
  studyDir?: string;
  /** Corpus admission for example items (shadow first); default writes `review/examples/<id>.json`. */
  admitExample?: (example: Record<string, unknown>, item: ReviewItem) => Promise<unknown> | unknown;
  now?: () => Date;
}

/** The result of a decision (zod's `safeParse` shape: an expected refusal is not thrown). */
export type ReviewDecisionResult =
  | { ok: true; item: ReviewItem }
  | { ok: false; reason: 'not_found' | 'already_decided' | 'invalid_payload'; message: string; item?: ReviewItem };

type ApplyResult = { ok: true; outcome: unknown } | { ok: false; message: string };

function checkReviewer(by: string): string {
  const name = typeof by === 'string' ? by.trim() : '';
  if (name === '') throw new InputError("a review decision needs the reviewer's name (--by NAME)", { field: 'by' });
  return name;
}

async function pendingItem(db: StudyDatabase, id: number): Promise<ReviewDecisionResult> {
  const item = await getReviewItem(db, id);
  if (item === undefined) return { ok: false, reason: 'not_found', message: `no review item ${id}` };
  if (item.status !== 'pending') {
    return {
      ok: false,
      reason: 'already_decided',
      message: `review item ${id} was already ${item.status} by ${item.decidedBy ?? '?'} at ${item.decidedAt ?? '?'}`,
      item,
    };
  }
  return { ok: true, item };
}

async function applyApproval(
  db: StudyDatabase,
  item: ReviewItem,
  by: string,
  options: ReviewDecisionOptions,
): Promise<ApplyResult> {
  const now = options.now ?? (() => new Date());
  switch (item.kind) {
    case 'artifact': {
      const payload = item.payload as unknown as ArtifactReviewPayload;
      const parent = (await getRegistryVersion(db))?.id ?? payload.baseVersionId ?? null;
      const version = await putVersion(db, payload.text, 'approved', parent, null, now);
      await setRegistryVersion(db, version.id, `review item ${item.id} approved by ${by}`, 'active', now);
      return { ok: true, outcome: { versionId: version.id, hash: version.hash, parentVersionId: parent } };
    }
    case 'pattern': {
      if (options.studyDir === undefined)
        throw new InputError('approving a pattern needs the study folder', { field: 'studyDir' });
      const payload = item.payload as unknown as PatternReviewPayload;
      if (!PATTERN_NAME.test(payload.name))
        throw new InputError(`invalid pattern name "${payload.name}"`, { field: 'payload.name' });
      const folder = path.join(options.studyDir, 'patterns');
      const file = path.join(folder, `${payload.name}.yaml`);
      // A pattern that would break the study's library is refused before anything is written.
      const parsed = parsePatternText(payload.yaml, file);
      if (!parsed.success)
        return { ok: false, message: `the pattern is invalid: ${parsed.issues.map(formatPatternIssue).join('; ')}` };
      let sources: Readonly<Record<string, string>> = {};
      try {
        sources = loadPatternLibrary(existsSync(folder) ? [folder] : []).sources;
      } catch {
        sources = loadPatternLibrary([]).sources; // the folder is already broken: still check the built-in ids
      }
      const clash = sources[parsed.pattern.id];
      if (clash !== undefined && path.resolve(clash) !== path.resolve(file))
        return { ok: false, message: `pattern id "${parsed.pattern.id}" is already defined in ${clash}` };
      // The library holds it already (approved earlier, or written by hand): an approval never replaces a pattern in silence.
      if (
        existsSync(file) &&
        readFileSync(file, 'utf8') !== (payload.yaml.endsWith('\n') ? payload.yaml : `${payload.yaml}\n`)
      ) {
        return {
          ok: false,
          message: `${path.relative(options.studyDir, file)} exists already (pattern id "${parsed.pattern.id}" is in the library): delete or rename it first to approve this version`,
        };
      }
      mkdirSync(folder, { recursive: true });
      writeFileAtomic(file, payload.yaml.endsWith('\n') ? payload.yaml : `${payload.yaml}\n`);
      return { ok: true, outcome: { file, patternId: parsed.pattern.id } };
    }
    case 'example': {
      const payload = item.payload as unknown as ExampleReviewPayload;
      if (options.admitExample !== undefined)
        return { ok: true, outcome: { admitted: (await options.admitExample(payload.example, item)) ?? true } };
      if (options.studyDir === undefined)
        throw new InputError('approving an example needs the study folder', { field: 'studyDir' });
      const folder = path.join(options.studyDir, 'review', 'examples');
      mkdirSync(folder, { recursive: true });
      const file = path.join(folder, `${item.id}.json`);
      // In the public corpus format (`{ "examples": [...] }`), so `kloop corpus add <study> <file>` admits it as it stands.
      writeFileAtomic(file, `${JSON.stringify({ examples: [payload.example] }, null, 2)}\n`);
      return { ok: true, outcome: { file } };
    }
  }
}

async function recordDecision(
  db: StudyDatabase,
  id: number,
  status: 'approved' | 'rejected',
  by: string,
  options: ReviewDecisionOptions,
  outcome: unknown,
): Promise<ReviewDecisionResult> {
  const updated = await recordReviewDecision(db, id, {
    status,
    by,
    at: isoNow(options.now),
    note: options.note ?? null,
    outcome,
  });
  if (updated === undefined) return pendingItem(db, id);
  return { ok: true, item: updated };
}

/**
 * Approves a pending item and applies it (see the module comment), recording
 * who, when and the note, in one transaction. A payload that cannot be
 * applied (an invalid pattern) is refused with `invalid_payload`: nothing is
 * applied or recorded, the item stays pending.
 *
 * @throws InputError when `by` is empty or a needed `studyDir` is missing
 */
export async function approveReviewItem(
  db: StudyDatabase,
  id: number,
  options: ReviewDecisionOptions,
): Promise<ReviewDecisionResult> {
  const by = checkReviewer(options.by);
  // One transaction: the registry move (or file write) and the decision land together.
  return inReviewTransaction(db, async (transaction) => {
    const found = await pendingItem(transaction, id);
    if (!found.ok) return found;
    const applied = await applyApproval(transaction, found.item, by, options);
    if (!applied.ok)
      return {
        ok: false as const,
        reason: 'invalid_payload' as const,
        message: `review item ${id} cannot be applied: ${applied.message}`,
        item: found.item,
      };
    return recordDecision(transaction, id, 'approved', by, options, applied.outcome);
  });
}

/**
 * Rejects a pending item: nothing is applied; who, when and the note are recorded.
 *
 * @throws InputError when `by` is empty
 */
export async function rejectReviewItem(
  db: StudyDatabase,
  id: number,
  options: ReviewDecisionOptions,
): Promise<ReviewDecisionResult> {
  const by = checkReviewer(options.by);
  const found = await pendingItem(db, id);
  if (!found.ok) return found;
  return recordDecision(db, id, 'rejected', by, options, undefined);
}
