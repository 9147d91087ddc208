import { createHash } from 'node:crypto';

/** SHA-256 of the UTF-8 bytes of `text`, lower-case hex (64 characters). */
export function contentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
