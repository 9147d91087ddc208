/**
 * Small, typed edits of a playbook text, applied with yaml's Document API so
 * comments and formatting survive, and spliced back so that every section the
 * edit does not touch stays byte-identical (the editable-region check compares
 * section texts).
 */
import { Document, YAMLMap, isMap, isNode, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { YAMLSeq } from 'yaml';
import type { z } from 'zod';
import { deepFreeze } from './deep-freeze.ts';
import { termKey } from './extract.ts';
import { formatPath, normalizeTerm, playbookSchema, playbookSectionSpans } from './playbook.ts';
import type { Playbook, PlaybookSection, SectionSpan } from './playbook.ts';
import { loadPlaybook } from './playbook-cache.ts';

/** A path into the playbook: the section, then map keys. */
export type PlaybookPath = readonly [PlaybookSection, ...string[]];

/** One single-purpose edit. */
export type PlaybookEdit =
  /** Appends a value (a cue, a stop word, a vocabulary value) to the list at `path`, creating it. */
  | { op: 'add'; path: PlaybookPath; value: string }
  /** Removes a value from the list at `path`. */
  | { op: 'remove'; path: PlaybookPath; value: string }
  /** Sets the map entry at `path` (the last segment is the key): a term's role, a policy setting, a relation cue. */
  | { op: 'set'; path: PlaybookPath; value: string | number | boolean | Readonly<Record<string, string | boolean>> }
  /** Deletes the map entry at `path`. */
  | { op: 'delete'; path: PlaybookPath }
  /** Gives the cue `value` of the list at `path` a weight (1 writes the plain cue). */
  | { op: 'weight'; path: PlaybookPath; value: string; weight: number }
  /**
   * Sets several entries of the map at `path` at once (a learned-lexicon
   * bundle: `entityTerms` read from the gold of several examples). Applies
   * when at least one entry changes.
   */
  | { op: 'setMany'; path: PlaybookPath; entries: Readonly<Record<string, string>> };

/**
 * The canonical one-line description of an edit, used as the candidate delta:
 * `appTypeCues.booking += "appointment"`, `entityTerms["time slot"] = "commitment"`,
 * `delete entityAliases.session`, `appTypeCues.booking["time slot"].weight = 2`.
 */
export function describePlaybookEdit(edit: PlaybookEdit): string {
  const path = formatPath(edit.path);
  switch (edit.op) {
    case 'add':
      return `${path} += ${JSON.stringify(edit.value)}`;
    case 'remove':
      return `${path} -= ${JSON.stringify(edit.value)}`;
    case 'set':
      return `${path} = ${JSON.stringify(edit.value)}`;
    case 'delete':
      return `delete ${path}`;
    case 'weight':
      return `${formatPath([...edit.path, edit.value])}.weight = ${edit.weight}`;
    case 'setMany':
      return `${path} += ${JSON.stringify(edit.entries)}`;
  }
}

/**
 * Applies one edit to a playbook text.
 *
 * Keys of term maps (`entityTerms`, `entityAliases`, `relationCues`, ...) are
 * matched by their normalised singular form, so `set entityTerms["Time slots"]`
 * updates an existing `time slot:` entry. Only the edited section's text
 * changes; the others, and the header comment, are kept byte for byte.
 *
 * @returns the new text, or null when the edit does not apply (missing entry,
 *   value already present, not a list, ...), changes nothing, or would make the
 *   playbook invalid
 */
export function applyPlaybookEdit(text: string, edit: PlaybookEdit): string | null {
  const edited = editPlaybook(text, edit);
  if (edited === null) return null;
  // Validates the text itself through the shared cache, so evaluating the candidate next costs no second parse.
  return loadPlaybook(edited.text).ok ? edited.text : null;
}

/**
 * {@link applyPlaybookEdit} without re-parsing the new text: the playbook is
 * validated from the edited YAML document's data. Cheaper, for screening many
 * edits; the text must still be parsed before it is trusted (the executor does).
 *
 * @returns the new text and its validated playbook, or null (see `applyPlaybookEdit`)
 */
export function editPlaybook(text: string, edit: PlaybookEdit): { text: string; playbook: Playbook } | null {
  const source = parsedSource(text);
  if (source === null) return null;
  const section = edit.path[0];
  const span = source.spans.find((entry) => entry.name === section);
  // Only the edited section is parsed and re-written: cheaper, and every other byte stays as it was.
  const doc = sectionDocument(source, section, span, edit);
  if (doc === null) return null;
  if (!applyToDocument(doc, edit)) return null;
  const sectionText = doc.toString({ lineWidth: 0, flowCollectionPadding: false });
  const result = splice(text, span, sectionText);
  if (result === text) return null;
  const sectionData = (doc.toJS() ?? {}) as Record<string, unknown>;
  // The other sections are the source's, already validated: only the edited one is checked again
  // (the schema has no rule across sections). A source that is not valid is checked whole.
  const sectionSchema = (playbookSchema.shape as Record<string, z.ZodType | undefined>)[section];
  const validSource = validatedSource(source);
  if (validSource !== null && sectionSchema !== undefined) {
    const checked = sectionSchema.safeParse(section in sectionData ? sectionData[section] : undefined);
    return checked.success ? { text: result, playbook: { ...validSource, [section]: checked.data } as Playbook } : null;
  }
  const data: Record<string, unknown> = { ...source.data };
  if (section in sectionData) data[section] = sectionData[section];
  else delete data[section];
  const validated = playbookSchema.safeParse(data);
  return validated.success ? { text: result, playbook: validated.data } : null;
}

/**
 * The source's playbook, validated once per source text and deeply frozen:
 * the playbooks of its edits share its unedited sections, so none may
 * change them. Null when the source is not a valid playbook.
 */
function validatedSource(source: ParsedSource): Playbook | null {
  if (source.validated === undefined) {
    const validated = playbookSchema.safeParse(source.data);
    source.validated = validated.success ? deepFreeze(validated.data) : null;
  }
  return source.validated;
}

/** Applies the edit to a document holding (at least) the edited section. False when it does not apply. */
function applyToDocument(doc: Document, edit: PlaybookEdit): boolean {
  const path = resolvePath(doc, edit.path);
  switch (edit.op) {
    case 'add': {
      const node = doc.getIn(path, true);
      const value = normalizeTerm(edit.value);
      if (isSeq(node)) {
        if (findItem(node, value) >= 0) return false;
        node.add(doc.createNode(value));
      } else if (node === undefined || (isScalar(node) && node.value === null)) {
        createList(doc, path, value);
      } else {
        return false;
      }
      return true;
    }
    case 'remove': {
      const node = doc.getIn(path, true);
      if (!isSeq(node)) return false;
      const index = findItem(node, normalizeTerm(edit.value));
      if (index < 0) return false;
      node.items.splice(index, 1);
      return true;
    }
    case 'set': {
      const current = doc.getIn(path, true);
      const currentValue = isMap(current) ? JSON.stringify(current.toJSON()) : JSON.stringify(doc.getIn(path));
      if (currentValue === JSON.stringify(edit.value)) return false;
      const parent = doc.getIn(path.slice(0, -1), true);
      if (parent !== undefined && parent !== null && !isMap(parent) && !(isScalar(parent) && parent.value === null))
        return false;
      if (typeof edit.value === 'object') {
        const node = doc.createNode(edit.value, { flow: true });
        doc.setIn(path, node);
      } else {
        doc.setIn(path, edit.value);
      }
      return true;
    }
    case 'delete': {
      if (!doc.hasIn(path)) return false;
      doc.deleteIn(path);
      return true;
    }
    case 'setMany': {
      let changed = false;
      for (const [key, value] of Object.entries(edit.entries)) {
        changed = applyToDocument(doc, { op: 'set', path: [...edit.path, key], value }) || changed;
      }
      return changed;
    }
    case 'weight': {
      const node = doc.getIn(path, true);
      if (!isSeq(node)) return false;
      const cue = normalizeTerm(edit.value);
      const index = findItem(node, cue);
      if (index < 0) return false;
      node.items[index] =
        edit.weight === 1 ? doc.createNode(cue) : doc.createNode({ cue, weight: edit.weight }, { flow: true });
      return true;
    }
  }
}

/**
 * Creates the list at `path` holding `value`, with any missing maps on the way:
 * flow style below an existing section (`helpdesk: {behaviors: [assignment]}`),
 * a block map for a new section.
 */
function createList(doc: Document, path: readonly string[], value: string): void {
  let existing = 0;
  while (existing < path.length - 1 && isMap(doc.getIn(path.slice(0, existing + 1), true))) existing += 1;
  let node: YAMLSeq | YAMLMap = doc.createNode([value]);
  node.flow = true;
  for (let index = path.length - 1; index > existing; index -= 1) {
    const map = new YAMLMap();
    map.flow = !(existing === 0 && index === 1);
    map.set(doc.createNode(path[index]!), node);
    node = map;
  }
  doc.setIn(path.slice(0, existing + 1), node);
}

interface ParsedSource {
  text: string;
  spans: readonly SectionSpan[];
  /** The whole playbook as plain data. */
  data: Record<string, unknown>;
  /** Parsed section texts, filled lazily; cloned before each edit. */
  sections: Map<string, Document | null>;
  /** The validated playbook (see `validatedSource`), filled lazily; null when the source is not valid. */
  validated?: Playbook | null;
}

const sourceCache = new Map<string, ParsedSource | null>();

/** Section spans and data of a playbook text (a few recent texts are cached). */
function parsedSource(text: string): ParsedSource | null {
  const cached = sourceCache.get(text);
  if (cached !== undefined) return cached;
  const doc = parseDocument(text, { uniqueKeys: true });
  const spans = playbookSectionSpans(text);
  const invalid = doc.errors.length > 0 || (doc.contents !== null && !isMap(doc.contents)) || spans === null;
  const source = invalid
    ? null
    : { text, spans, data: (doc.toJS() ?? {}) as Record<string, unknown>, sections: new Map() };
  if (sourceCache.size >= 8) sourceCache.delete(sourceCache.keys().next().value!);
  sourceCache.set(text, source);
  return source;
}

/**
 * A document of one section's text that `edit` may change (an empty document
 * for a missing section). The section is parsed once per source; each edit
 * gets a copy in which only what the edit can change is its own (see
 * {@link copyForEdit}), the rest shared with that parse, which nothing changes.
 */
function sectionDocument(
  source: ParsedSource,
  section: string,
  span: SectionSpan | undefined,
  edit: PlaybookEdit,
): Document | null {
  if (span === undefined) return new Document({}) as Document;
  let parsed = source.sections.get(section);
  if (parsed === undefined) {
    const doc = parseDocument(source.text.slice(span.start, span.end), { uniqueKeys: true });
    parsed = doc.errors.length > 0 || !isMap(doc.contents) ? null : doc;
    source.sections.set(section, parsed);
  }
  return parsed === null ? null : copyForEdit(parsed, edit);
}

/**
 * Copy on write: the document's root map, the section's entry and the
 * section's own collection are copied (new item arrays; a scalar section is
 * cloned), and every entry of the section the edit names — by its key as
 * written or by its term key, as {@link resolvePath} finds it — is cloned
 * whole. {@link applyToDocument}
 * changes only those: it adds to, removes from or sets in the collection at
 * the edit's path, which lies in one of them. Cloning the whole section for
 * every candidate was most of the cost of building it.
 */
function copyForEdit(parsed: Document, edit: PlaybookEdit): Document {
  const contents = parsed.contents;
  if (!isMap(contents)) return parsed.clone();
  // The document's own settings without its contents, which are copied below.
  parsed.contents = null;
  const doc = parsed.clone();
  parsed.contents = contents;
  const named = edit.op === 'setMany' ? Object.keys(edit.entries) : edit.path.length > 1 ? [edit.path[1]!] : [];
  const keys = new Set(named.map(termKey));
  const root = shallowCopy(contents);
  root.items = contents.items.map((pair) => {
    if (!isScalar(pair.key) || String(pair.key.value) !== edit.path[0]) return pair;
    const entry = shallowCopy(pair);
    if (isMap(pair.value) || isSeq(pair.value)) {
      const section = shallowCopy(pair.value);
      section.items = (pair.value.items as unknown[]).map((item) =>
        isPair(item) &&
        isScalar(item.key) &&
        (named.includes(String(item.key.value)) || keys.has(termKey(String(item.key.value))))
          ? item.clone()
          : item,
      ) as typeof section.items;
      entry.value = section;
    } else if (isNode(pair.value)) {
      // A scalar section (`defaultAppType: custom`): setting it changes the scalar node itself.
      entry.value = pair.value.clone();
    }
    return entry;
  });
  doc.contents = root;
  return doc;
}

/** A copy of a node or pair with the same prototype and own properties (its items array still shared). */
function shallowCopy<T extends object>(node: T): T {
  return Object.create(Object.getPrototypeOf(node) as object, Object.getOwnPropertyDescriptors(node)) as T;
}

/** Replaces the section's span with its new text (keeping the blank lines that followed it), or appends it. */
function splice(original: string, span: SectionSpan | undefined, sectionText: string): string {
  if (span === undefined) {
    // No blank line before it: blank lines after a section belong to that section's text.
    const separator = original === '' || original.endsWith('\n') ? '' : '\n';
    return original + separator + sectionText;
  }
  const oldText = original.slice(span.start, span.end);
  const oldTrailing = /\n*$/.exec(oldText)?.[0] ?? '';
  let replacement = sectionText.replace(/\n*$/, '') + oldTrailing;
  if (oldTrailing === '' && span.end < original.length) replacement += '\n';
  return original.slice(0, span.start) + replacement + original.slice(span.end);
}

/** Maps path keys to the existing key literal with the same normalised form. */
function resolvePath(doc: Document, path: PlaybookPath): string[] {
  const resolved: string[] = [];
  let node: unknown = doc.contents;
  for (const segment of path) {
    let key = segment;
    if (isMap(node)) {
      const map = node as YAMLMap;
      const exact = map.items.find((pair) => isPair(pair) && isScalar(pair.key) && String(pair.key.value) === segment);
      const similar =
        exact ??
        map.items.find(
          (pair) => isPair(pair) && isScalar(pair.key) && termKey(String(pair.key.value)) === termKey(segment),
        );
      if (similar !== undefined && isScalar(similar.key)) key = String(similar.key.value);
      node = similar?.value;
    } else {
      node = undefined;
    }
    resolved.push(key);
  }
  return resolved;
}

/** Index of the cue or value `value` (normalised) in a list, or -1. */
function findItem(seq: YAMLSeq, value: string): number {
  return seq.items.findIndex((item) => {
    if (isScalar(item)) return item.value !== null && termKey(String(item.value)) === termKey(value);
    if (isMap(item)) {
      const cue = item.get('cue');
      return typeof cue === 'string' && termKey(cue) === termKey(value);
    }
    return false;
  });
}
