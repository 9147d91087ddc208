/**
 * The review queue's table (src/review/review-queue.ts): `review_items`, one
 * row per change or finding that waits for a human decision, with who
 * decided it, when, and what approval did.
 */
import type { StudyDatabase } from '../study-database.ts';
import type { ReviewItemTable } from '../schema.ts';

export const REVIEW_ITEM_KINDS = ['artifact', 'pattern', 'example'] as const;
export type ReviewItemKind = (typeof REVIEW_ITEM_KINDS)[number];

export const REVIEW_ITEM_SOURCES = ['loop-a', 'loop-c', 'loop-d'] as const;
export type ReviewItemSource = (typeof REVIEW_ITEM_SOURCES)[number];

export const REVIEW_ITEM_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ReviewItemStatus = (typeof REVIEW_ITEM_STATUSES)[number];

/** A stored review item (read-only record). */
export interface ReviewItem {
  readonly id: number;
  readonly kind: ReviewItemKind;
  readonly source: ReviewItemSource;
  readonly title: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly evidence: unknown;
  /** SHA-256 of kind + payload (dedupe key). */
  readonly contentHash: string;
  readonly status: ReviewItemStatus;
  readonly runId: number | null;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly decidedAt: string | null;
  readonly decidedBy: string | null;
  readonly note: string | null;
  /** What approval did, e.g. `{ versionId }` or `{ file }`. */
  readonly outcome: unknown;
}

/** A new, pending item as stored (payload and evidence are serialized as JSON). */
export interface NewStoredReviewItem {
  kind: ReviewItemKind;
  source: ReviewItemSource;
  title: string;
  payload: unknown;
  evidence: unknown;
  contentHash: string;
  runId: number | null;
  /** ISO 8601. */
  createdAt: string;
}

/** A decision on a pending item. */
export interface ReviewDecisionRecord {
  status: 'approved' | 'rejected';
  by: string;
  /** ISO 8601. */
  at: string;
  note: string | null;
  /** What approval did (serialized as JSON); undefined for none. */
  outcome: unknown;
}

/** Filters for {@link listReviewItems}. */
export interface ListReviewItemsOptions {
  /** Default 'pending'; 'all' lists every item. */
  status?: ReviewItemStatus | 'all';
  kind?: ReviewItemKind;
  source?: ReviewItemSource;
}

/** The functions of this module, without their `db` argument. */
export interface ReviewStore {
  findReviewItemByHash(hash: string): Promise<ReviewItem | undefined>;
  insertReviewItem(item: NewStoredReviewItem): Promise<ReviewItem>;
  listReviewItems(options?: ListReviewItemsOptions): Promise<ReviewItem[]>;
  getReviewItem(id: number): Promise<ReviewItem | undefined>;
  recordReviewDecision(id: number, decision: ReviewDecisionRecord): Promise<ReviewItem | undefined>;
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function toReviewItem(row: { [K in keyof ReviewItemTable]: K extends 'id' ? number : ReviewItemTable[K] }): ReviewItem {
  return Object.freeze({
    id: row.id,
    kind: row.kind as ReviewItemKind,
    source: row.source as ReviewItemSource,
    title: row.title,
    payload: Object.freeze((parseJson(row.payload) ?? {}) as Record<string, unknown>),
    evidence: parseJson(row.evidence),
    contentHash: row.content_hash,
    status: row.status as ReviewItemStatus,
    runId: row.run_id,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
    decidedBy: row.decided_by,
    note: row.note,
    outcome: parseJson(row.outcome),
  });
}

/** The first item (lowest id) with this content hash, whatever its status. */
export async function findReviewItemByHash(db: StudyDatabase, hash: string): Promise<ReviewItem | undefined> {
  const row = await db
    .selectFrom('review_items')
    .selectAll()
    .where('content_hash', '=', hash)
    .orderBy('id')
    .executeTakeFirst();
  return row === undefined ? undefined : toReviewItem(row);
}

/** Stores a new pending item and returns it with its id. */
export async function insertReviewItem(db: StudyDatabase, item: NewStoredReviewItem): Promise<ReviewItem> {
  const row = await db
    .insertInto('review_items')
    .values({
      kind: item.kind,
      source: item.source,
      title: item.title,
      payload: JSON.stringify(item.payload),
      evidence: JSON.stringify(item.evidence),
      content_hash: item.contentHash,
      status: 'pending',
      run_id: item.runId,
      created_at: item.createdAt,
      decided_at: null,
      decided_by: null,
      note: null,
      outcome: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toReviewItem(row);
}

/** Review items, oldest first. */
export async function listReviewItems(db: StudyDatabase, options: ListReviewItemsOptions = {}): Promise<ReviewItem[]> {
  let query = db.selectFrom('review_items').selectAll().orderBy('id');
  const status = options.status ?? 'pending';
  if (status !== 'all') query = query.where('status', '=', status);
  if (options.kind !== undefined) query = query.where('kind', '=', options.kind);
  if (options.source !== undefined) query = query.where('source', '=', options.source);
  const rows = await query.execute();
  return rows.map(toReviewItem);
}

/** One item by id, or undefined. */
export async function getReviewItem(db: StudyDatabase, id: number): Promise<ReviewItem | undefined> {
  const row = await db.selectFrom('review_items').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toReviewItem(row);
}

/** Records a decision on item `id` if it is still pending; returns the item decided, or undefined when it was not pending (or does not exist). */
export async function recordReviewDecision(
  db: StudyDatabase,
  id: number,
  decision: ReviewDecisionRecord,
): Promise<ReviewItem | undefined> {
  const updated = await db
    .updateTable('review_items')
    .set({
      status: decision.status,
      decided_by: decision.by,
      decided_at: decision.at,
      note: decision.note,
      outcome: decision.outcome === undefined ? null : JSON.stringify(decision.outcome),
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
  return updated === undefined ? undefined : toReviewItem(updated);
}

/**
 * Runs `body` in one transaction on the study database, so that an approval
 * (its registry move) and the decision that records it land together;
 * `body` gets the transaction to pass to store functions.
 */
export function inReviewTransaction<T>(
  db: StudyDatabase,
  body: (transaction: StudyDatabase) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(body);
}
