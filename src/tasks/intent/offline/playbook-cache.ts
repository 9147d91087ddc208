/**
 * One cache of parsed and compiled playbooks, shared by the offline executor
 * and the playbook editor, keyed by the exact playbook text: evaluating a
 * candidate right after building it costs no second parse.
 */
import type { CompiledPlaybook } from './extract.ts';
import { compilePlaybook } from './extract.ts';
import type { PlaybookError } from './playbook.ts';
import { parsePlaybook } from './playbook.ts';

export type LoadedPlaybook = { ok: true; compiled: CompiledPlaybook } | { ok: false; errors: PlaybookError[] };

const CACHE_LIMIT = 512;
const cache = new Map<string, LoadedPlaybook>();

/**
 * Parses, validates and compiles a playbook text, cached by the exact text
 * (least recently used entries are evicted beyond 512 texts). Never throws.
 */
export function loadPlaybook(text: string): LoadedPlaybook {
  const cached = cache.get(text);
  if (cached !== undefined) {
    cache.delete(text);
    cache.set(text, cached);
    return cached;
  }
  const parsed = parsePlaybook(text);
  const result: LoadedPlaybook = parsed.ok ? { ok: true, compiled: compilePlaybook(parsed.playbook) } : parsed;
  if (cache.size >= CACHE_LIMIT) {
    const oldest = cache.keys().next();
    if (oldest.done !== true) cache.delete(oldest.value);
  }
  cache.set(text, result);
  return result;
}
