/**
 * One cache of parsed and compiled playbooks, shared by the offline executor
 * and the playbook editor, keyed by the exact playbook text: evaluating a
 * candidate right after building it costs no second parse.
 */
import type { CompiledPlaybook } from './extract.ts';
import { compilePlaybook } from './extract.ts';
import type { Playbook, PlaybookError } from './playbook.ts';
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
  return store(text, parsed.ok ? { ok: true, compiled: compilePlaybook(parsed.playbook) } : parsed);
}

/**
 * {@link loadPlaybook} for a text whose validated playbook is already at hand
 * — an edit's (`editPlaybook`, which gives what a parse of its text gives) —
 * and maybe compiled: the text is not parsed again. The playbook then shares
 * its unedited sections with its source, as the edit's does (what lets the
 * extractor reuse readings between the edits of one source). A text already
 * cached is returned as cached.
 */
export function rememberPlaybook(text: string, playbook: Playbook, compiled?: CompiledPlaybook): LoadedPlaybook {
  const cached = cache.get(text);
  if (cached !== undefined) {
    cache.delete(text);
    cache.set(text, cached);
    return cached;
  }
  return store(text, { ok: true, compiled: compiled ?? compilePlaybook(playbook) });
}

function store(text: string, result: LoadedPlaybook): LoadedPlaybook {
  if (cache.size >= CACHE_LIMIT) {
    const oldest = cache.keys().next();
    if (oldest.done !== true) cache.delete(oldest.value);
  }
  cache.set(text, result);
  return result;
}
