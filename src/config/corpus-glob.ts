/** Corpus globs of `kloop.yaml` (src/config/config.ts), expanded with fast-glob. */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import fastGlob from 'fast-glob';

/** True when a path is a glob pattern (`*`, `?`, `[...]`, `{a,b}`, `**`), as fast-glob reads it. */
export function hasGlob(pattern: string): boolean {
  return fastGlob.isDynamicPattern(pattern.split(path.sep).join('/'));
}

/**
 * Expands an absolute glob into the files it matches, with fast-glob: `*` and
 * `?` within a name, `[abc]` classes, `{a,b}` alternatives, `**` for any
 * depth. Names starting with "." match only a pattern segment that starts
 * with "." (fast-glob's `dot: false`). Returns absolute paths, sorted, each
 * once. The folders before the first glob segment are taken literally, so a
 * study folder whose name holds `(`, `[` or `*` is no pattern.
 *
 * @throws the file system's error (EACCES, …) when a folder on the way cannot
 *   be read: an unreadable folder is never skipped in silence
 */
export function expandGlob(absolutePattern: string): string[] {
  const segments = absolutePattern.split(path.sep);
  const firstGlob = segments.findIndex((segment) => segment !== '' && fastGlob.isDynamicPattern(segment));
  if (firstGlob === -1)
    return existsSync(absolutePattern) && statSync(absolutePattern).isFile() ? [absolutePattern] : [];
  const base = segments.slice(0, firstGlob).join(path.sep) || path.sep;
  if (!existsSync(base)) return [];
  const matches = fastGlob.sync(segments.slice(firstGlob).join('/'), {
    cwd: base,
    absolute: true,
    onlyFiles: true,
    dot: false,
    followSymbolicLinks: true,
    suppressErrors: false,
    unique: true,
  });
  return [...new Set(matches.map((match) => path.normalize(match)))].sort();
}
