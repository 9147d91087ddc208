/** `notebook:` and `storage:` of `kloop.yaml` (src/config/config.ts): the notebook's git mirror and where it is kept. */
import { z } from 'zod';
import { isPostgresUrl, parseStorageTarget } from '../storage/location.ts';

/** The lab notebook's optional git mirror (src/storage/git-mirror.ts). */
export const notebookSchema = z.strictObject({
  /** Commit every move of the active version (seed, accepted, approved, activated) to a git repository in `.kloop/notebook/`. Default false. */
  git: z.boolean().default(false),
});

/** `storage`: a PostgreSQL URL whose schema, if given, is a plain identifier (src/storage/location.ts). */
export const storageSchema = z
  .string()
  .trim()
  .refine(
    (value) => isPostgresUrl(value),
    'a postgres:// or postgresql:// URL (leave storage out for the SQLite file .kloop/kloop.db)',
  )
  .refine((value) => {
    try {
      parseStorageTarget(value);
      return true;
    } catch {
      return false;
    }
  }, 'not a valid PostgreSQL URL, or its schema is not a plain lower-case identifier (letters, digits and _)');
