/**
 * The response cache: model answers stored in the study database
 * (`response_cache`), so that resuming a study pays for nothing twice.
 *
 * The key is the SHA-256 of everything that changes the answer: provider,
 * model, base URL, every sampling parameter, the structured-output mode, the
 * full system and user messages, the answer's JSON schema and the repeat
 * index (repeats are fresh samples, so each repeat has its own entry). No
 * secret is part of the key or the stored value.
 *
 * What is stored: every answer the server completed with some text, including
 * answers that turn out truncated or unparsable — those are the model's
 * outcome for that request and repeat, and asking again until one parses
 * would hide the invalid rate. What is never stored: errors, timeouts,
 * empty answers and responses that are not answers (an HTTP 200 carrying an
 * error: `faults.ts`). A `--no-cache` call reads nothing and its answer
 * replaces the stored one.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { isoNow } from '../storage/study-database.ts';
import { readCachedResponse, writeCachedResponse } from '../storage/notebook/response-cache-store.ts';

/** Version of the key layout; bump to invalidate every stored answer. */
export const CACHE_KEY_VERSION = 'kloop-response-cache@1';

/** Everything that changes an answer. */
export interface CacheKeyInput {
  provider: string;
  model: string;
  baseURL: string;
  parameters: Readonly<Record<string, unknown>>;
  system: string;
  prompt: string;
  schema?: unknown;
  repeat: number;
}

/** A stored answer. */
export interface CachedAnswer {
  text: string;
  finishReason: string;
  inputTokens: number;
  outputTokens: number;
}

/** SHA-256 (hex) of a {@link CacheKeyInput}, with object keys sorted so the key is stable. */
export function responseCacheKey(input: CacheKeyInput): string {
  return contentHash(stableStringify([CACHE_KEY_VERSION, input]));
}

/** JSON with object keys sorted at every level (`undefined` members dropped). */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    return Object.fromEntries(
      Object.keys(inner)
        .sort()
        .map((key) => [key, (inner as Record<string, unknown>)[key]]),
    );
  });
}

export interface ResponseCache {
  get(key: string): Promise<CachedAnswer | undefined>;
  /**
   * Stores an answer. An answer already stored under `key` stays, unless
   * `replace` is true (a re-measurement: `--no-cache` asked the model again).
   */
  put(key: string, model: string, answer: CachedAnswer, replace?: boolean): Promise<void>;
}

/**
 * A cache over the study database returned by `getDatabase` (looked up on
 * every call; no database = no caching).
 */
export function createResponseCache(
  getDatabase: () => StudyDatabase | undefined,
  now: () => Date = () => new Date(),
): ResponseCache {
  return {
    async get(key) {
      const db = getDatabase();
      if (db === undefined) return undefined;
      const response = await readCachedResponse(db, key);
      if (response === undefined) return undefined;
      try {
        const parsed = JSON.parse(response) as Partial<CachedAnswer>;
        if (typeof parsed.text !== 'string' || typeof parsed.finishReason !== 'string') return undefined;
        return {
          text: parsed.text,
          finishReason: parsed.finishReason,
          inputTokens: typeof parsed.inputTokens === 'number' ? parsed.inputTokens : 0,
          outputTokens: typeof parsed.outputTokens === 'number' ? parsed.outputTokens : 0,
        };
      } catch {
        return undefined;
      }
    },
    async put(key, model, answer, replace = false) {
      const db = getDatabase();
      if (db === undefined) return;
      await writeCachedResponse(db, key, { model, response: JSON.stringify(answer), createdAt: isoNow(now) }, replace);
    },
  };
}
