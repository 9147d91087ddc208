/**
 * What `PlantUmlReader` reads from a single line without its state: the
 * statement patterns, class members and enum values, and the note forms;
 * and the types of the reader's modes, open blocks and pending links.
 */
import { IDENTIFIER, unquote } from './plantuml-declaration.ts';
import type {
  PlantUmlAssociationClass,
  PlantUmlClass,
  PlantUmlEnum,
  PlantUmlNote,
  PlantUmlRelation,
} from './plantuml.ts';

export const DECLARATION = /^(abstract\s+class|abstract|class|interface|entity|enum)(?:\s+(.*))?$/;
export const UNSUPPORTED_DECLARATION =
  /^(annotation|struct|protocol|exception|metaclass|stereotype|dataclass|record|object|map|json|circle|diamond|usecase|actor|component|state|participant)\s/;
export const CONTAINER = /^(package|namespace|folder|frame|cloud|node|rectangle|database)(?:\s+(.*))?$/;
export const IGNORED =
  /^(hide|show|remove|restore|left\s+to\s+right\s+direction|top\s+to\s+bottom\s+direction|scale|allowmixing|allow_mixing|newpage|skinparam|!theme|!pragma|caption)\b/;
/** What the reader is inside: the diagram, a class or enum body, a note block, or a skipped block. */
export type Mode =
  | { type: 'diagram' }
  | { type: 'class-body'; target: PlantUmlClass; line: number }
  | { type: 'enum-body'; target: PlantUmlEnum; line: number }
  | { type: 'note'; note: PlantUmlNote; lines: string[] }
  | { type: 'skip'; until: RegExp; line: number; what: string }
  | { type: 'skip-braces'; depth: number; line: number; what: string };

/** An open package or `together` block. */
export interface Frame {
  kind: 'package' | 'together';
  closer: '}' | 'end';
  path?: string;
  line: number;
}

/** A link read, resolved once the whole diagram is read. */
export type Pending =
  | { type: 'relation'; relation: PlantUmlRelation; text: string }
  | { type: 'association-class'; value: PlantUmlAssociationClass; text: string };

const SEPARATOR = /^(?:[-.=_]{2,}.*[-.=_]{2,}|[-.=_]{2,})$/;
export const MEMBER_LINE = new RegExp(String.raw`^("[^"]+"|${IDENTIFIER})\s*:\s*(.+)$`, 'u');

/** How many times `character` occurs in `text`. */
export function countOf(text: string, character: string): number {
  return text.split(character).length - 1;
}

/** Adds one member line to a class: a method when it has parentheses or `{method}`, else an attribute; separators are skipped. */
export function addMember(target: PlantUmlClass, member: string): void {
  const text = member.trim();
  if (text === '' || SEPARATOR.test(text)) return;
  const forced = /^\{(field|method)\}/.exec(text)?.[1];
  const isMethod = forced === 'method' || (forced !== 'field' && /\(.*\)/.test(text));
  (isMethod ? target.methods : target.attributes).push(text);
}

/** Adds the values of one enum body line (split on `,` and `;`, initialisers and arguments dropped). */
export function addEnumValues(target: PlantUmlEnum, text: string): void {
  const trimmed = text.trim();
  if (trimmed === '' || SEPARATOR.test(trimmed)) return;
  for (const part of trimmed.split(/[,;]/)) {
    const value = part.replace(/\s*(?:=.*|\(.*)$/, '').trim();
    if (value !== '') target.values.push(value);
  }
}

/**
 * The note a `note <rest>` line opens: `inline` is its one-line text, absent
 * when a block follows (up to `end note`); `reason` when the form is not read
 * or the note has nothing to attach to.
 */
export function parseNote(
  rest: string,
  line: number,
  lastLinkLine: number | undefined,
  lastElement: string | undefined,
): { note: PlantUmlNote; inline: string | undefined } | { reason: string } {
  let match: RegExpExecArray | null;
  if ((match = /^"((?:[^"\\]|\\.)*)"\s+as\s+(\S+)\s*(?:#\S+)?$/.exec(rest)) !== null) {
    const inline = (match[1] ?? '').replace(/\\n/g, '\n');
    return { note: { text: '', alias: match[2] ?? '', attachedTo: [], line }, inline };
  }
  if ((match = /^as\s+(\S+)\s*(?:#\S+)?$/.exec(rest)) !== null) {
    return { note: { text: '', alias: match[1] ?? '', attachedTo: [], line }, inline: undefined };
  }
  if ((match = /^(?:(?:left|right|top|bottom)\s+)?on\s+link\s*(?:#\S+\s*)?(?::\s*(.*))?$/.exec(rest)) !== null) {
    if (lastLinkLine === undefined) return { reason: 'note on link before any link' };
    return { note: { text: '', attachedTo: [{ kind: 'link', line: lastLinkLine }], line }, inline: match[1] };
  }
  if (
    (match = new RegExp(
      String.raw`^(?:left|right|top|bottom)(?:\s+of\s+("[^"]+"|${IDENTIFIER}))?\s*(?:#\S+\s*)?(?::\s*(.*))?$`,
      'u',
    ).exec(rest)) !== null
  ) {
    const target = match[1] === undefined ? lastElement : unquote(match[1]);
    if (target === undefined) return { reason: 'note placed beside no element' };
    return { note: { text: '', attachedTo: [{ kind: 'element', name: target }], line }, inline: match[2] };
  }
  return { reason: 'note form not read' };
}
