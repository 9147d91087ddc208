/** The body of the viewer's changes (activate a version, decide a review item). */
import type { Context } from 'hono';
import { InputError } from '../errors.ts';

/** The body of a decision: `{ by, note? }`. */
export async function readDecision(context: Context): Promise<{ by: string; note?: string }> {
  let body: unknown;
  try {
    body = await context.req.json();
  } catch {
    throw new InputError('send a JSON body { "by": "your name", "note": "why" }', { field: 'body' });
  }
  const record = (body ?? {}) as { by?: unknown; note?: unknown };
  const by = typeof record.by === 'string' ? record.by.trim() : '';
  if (by === '') throw new InputError('a name is required: who does this is recorded in the notebook', { field: 'by' });
  return { by, ...(typeof record.note === 'string' && record.note.trim() !== '' ? { note: record.note.trim() } : {}) };
}
