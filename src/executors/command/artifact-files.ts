/**
 * Content-addressed artifact files: a program run by the command executor
 * reads the candidate artifact from a file, so each distinct artifact text
 * is written once, under a name made of its SHA-256, and reused.
 *
 * Layout: `<directory>/<first 32 hex digits of the SHA-256 of the UTF-8
 * text><extension>`, e.g. `/tmp/kloop-artifacts/3f2a…9c.yaml`. A file is
 * written to a temporary name beside it and renamed into place, so a
 * program (or another kloop process sharing the folder) never sees half a
 * file. An existing file is reused when its bytes are the text's; any other
 * content under that name is replaced.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contentHash } from '../../artifact/content-hash.ts';
import { StorageError } from '../../errors.ts';

/** Hex digits of the SHA-256 in a file name (128 bits: collisions are not a concern). */
export const ARTIFACT_HASH_DIGITS = 32;

/** The default folder: `<os.tmpdir()>/kloop-artifacts`. */
export function defaultArtifactDirectory(): string {
  return path.join(tmpdir(), 'kloop-artifacts');
}

/** Writes artifact texts to content-addressed files. */
export interface ArtifactFiles {
  /** The absolute folder the files are written to. */
  readonly directory: string;
  /** The absolute path of the file that holds `text`, written on the first call for that text. */
  pathFor(text: string): Promise<string>;
}

/**
 * Creates an {@link ArtifactFiles} store.
 *
 * @param directory the folder (created when missing); default {@link defaultArtifactDirectory}
 * @param extension appended to each file name, `''` or a dot and at least one character (`.yaml`)
 * @throws StorageError from `pathFor` when the folder or the file cannot be written
 * @example
 * ```ts
 * const files = createArtifactFiles(undefined, '.yaml');
 * const file = await files.pathFor('rules: []\n'); // '/tmp/kloop-artifacts/<32 hex digits>.yaml'
 * ```
 */
export function createArtifactFiles(directory: string = defaultArtifactDirectory(), extension = ''): ArtifactFiles {
  const absolute = path.resolve(directory);
  const written = new Map<string, Promise<string>>();

  async function write(text: string, file: string): Promise<string> {
    try {
      await mkdir(absolute, { recursive: true });
      const current = await readFile(file, 'utf8').catch(() => undefined);
      if (current === text) return file;
      const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        await writeFile(temporary, text, 'utf8');
        await rename(temporary, file);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      return file;
    } catch (error) {
      throw new StorageError(`cannot write the artifact file ${file}: ${(error as Error).message}`, { cause: error });
    }
  }

  return {
    directory: absolute,
    pathFor(text) {
      const file = path.join(absolute, `${contentHash(text).slice(0, ARTIFACT_HASH_DIGITS)}${extension}`);
      let pending = written.get(file);
      if (pending === undefined) {
        pending = write(text, file);
        // A failed write is tried again on the next call.
        pending.catch(() => written.delete(file));
        written.set(file, pending);
      }
      return pending;
    },
  };
}
