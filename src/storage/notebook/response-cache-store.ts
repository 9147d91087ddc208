/**
 * The stored model answers of the response cache (src/providers/response-cache.ts):
 * the `response_cache` table, one JSON answer per key.
 */
import type { StudyDatabase } from '../study-database.ts';

/** A stored answer, as written: the JSON text of the answer and the model that gave it. */
export interface StoredResponse {
  /** The model id the answer came from. */
  model: string;
  /** The answer, serialized as JSON by the caller. */
  response: string;
  /** ISO 8601 time it was stored. */
  createdAt: string;
}

/** The functions of this module, without their `db` argument. */
export interface ResponseCacheStore {
  readCachedResponse(key: string): Promise<string | undefined>;
  writeCachedResponse(key: string, stored: StoredResponse, replace: boolean): Promise<void>;
}

/** The JSON text stored under `key`, or undefined when none is. */
export async function readCachedResponse(db: StudyDatabase, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('response_cache').select('response').where('key', '=', key).executeTakeFirst();
  return row?.response;
}

/**
 * Stores an answer under `key`. An answer already stored there stays, unless
 * `replace` is true (then it is overwritten).
 */
export async function writeCachedResponse(
  db: StudyDatabase,
  key: string,
  stored: StoredResponse,
  replace: boolean,
): Promise<void> {
  const values = { model: stored.model, response: stored.response, created_at: stored.createdAt };
  await db
    .insertInto('response_cache')
    .values({ key, ...values })
    .onConflict((conflict) =>
      replace ? conflict.column('key').doUpdateSet(values) : conflict.column('key').doNothing(),
    )
    .execute();
}
