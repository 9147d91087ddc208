/**
 * Reading one PlantUML link line of a class diagram: `A "1" *-- "0..*" B : label`.
 *
 * Arrow shapes: a body of `-` or `.` characters (solid or dashed), optionally
 * with a direction hint (`-up->`, `.l.>`) and a bracketed style
 * (`-[hidden]-`, `-[#red,bold]->`), and a head on either side:
 *
 * | head | meaning | normalised direction |
 * |---|---|---|
 * | `<\|` / `\|>` | inheritance (or realisation when dashed) | from = child, to = parent |
 * | `*` | composition | from = whole, to = part |
 * | `o` | aggregation | from = whole, to = part |
 * | `<` / `>` on a dashed line | dependency | from = dependent, to = target |
 * | none, `<` / `>` on a solid line, `x` | association | as written |
 *
 * Heads `#`, `+`, `{`, `}` and conflicting pairs (`<|--*`) are not read.
 * Source: the PlantUML class-diagram language reference (plantuml.com/class-diagram).
 */

/** How two classifiers are related. */
export type PlantUmlRelationKind = 'association' | 'aggregation' | 'composition' | 'inheritance' | 'dependency';

/** A link line read into its parts, before names are resolved. */
export interface RawLink {
  readonly type: 'relation';
  readonly from: string;
  readonly to: string;
  readonly kind: PlantUmlRelationKind;
  readonly lineStyle: 'solid' | 'dashed';
  readonly fromMultiplicity?: string;
  readonly toMultiplicity?: string;
  readonly label?: string;
  /** `-[hidden]-`: a layout-only link that PlantUML does not draw. */
  readonly hidden: boolean;
}

/** `(A, B) .. C` or `C .. (A, B)`: C is the association class of the A–B association. */
export interface RawAssociationClass {
  readonly type: 'association-class';
  readonly ends: readonly [string, string];
  readonly cls: string;
}

/** A line that looks like a link but cannot be read; `reason` says why. */
export interface RawLinkFailure {
  readonly type: 'unreadable';
  readonly reason: string;
}

export type LinkReading = RawLink | RawAssociationClass | RawLinkFailure;

const NAME = String.raw`"[^"]+"|[\p{L}\p{N}_$]+(?:\.[\p{L}\p{N}_$]+)*`;
const TUPLE = String.raw`\(\s*[^,()]+?\s*,\s*[^,()]+?\s*\)`;
const END = String.raw`(${TUPLE}|${NAME})`;
const MULTIPLICITY = String.raw`(?:"([^"]*)")?`;
const LEFT_HEAD = String.raw`(<\||<|\*|o|x|#|\+|\}|\{)?`;
const RIGHT_HEAD = String.raw`(\|>|>|\*|o|x|#|\+|\{|\})?`;
const HINT = String.raw`(?:\[[^\]]*\]|up|down|left|right|le|ri|do|u|d|l|r)`;
const BODY = String.raw`([-.]+(?:${HINT}+[-.]+)?|[-.]+${HINT}+)`;

const LINK = new RegExp(
  String.raw`^${END}\s*${MULTIPLICITY}\s*${LEFT_HEAD}${BODY}${RIGHT_HEAD}\s*${MULTIPLICITY}\s*${END}\s*(?::\s*(.*))?$`,
  'u',
);

/** Whether a trimmed line has the shape of a link (two ends around an arrow). */
export function looksLikeLink(trimmed: string): boolean {
  return LINK.test(trimmed);
}

function unquote(name: string): string {
  const trimmed = name.trim();
  return trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1).trim() : trimmed;
}

function parseTuple(end: string): [string, string] | undefined {
  if (!end.startsWith('(')) return undefined;
  const [first, second] = end.slice(1, -1).split(',');
  if (first === undefined || second === undefined) return undefined;
  return [unquote(first), unquote(second)];
}

/** Label text without PlantUML's reading-direction markers (`< label`, `label >`). */
function cleanLabel(label: string | undefined): string | undefined {
  if (label === undefined) return undefined;
  const cleaned = label
    .trim()
    .replace(/^[<◀]\s*/u, '')
    .replace(/\s*[>▶]$/u, '')
    .trim();
  return cleaned === '' ? undefined : cleaned;
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

/**
 * Reads one trimmed line as a link. Returns `undefined` when the line does not
 * have the shape of a link at all, and `{ type: 'unreadable', reason }` when it
 * does but its arrow or ends cannot be interpreted.
 */
export function parseLink(trimmed: string): LinkReading | undefined {
  const match = LINK.exec(trimmed);
  if (match === null) return undefined;
  const [, leftEnd = '', leftMult, leftHead = '', body = '', rightHead = '', rightMult, rightEnd = '', rawLabel] =
    match;
  const lineStyle = body.replace(/\[[^\]]*\]/g, '').includes('.') ? 'dashed' : 'solid';
  const hidden = /\[[^\]]*\bhidden\b[^\]]*\]/i.test(body);
  const label = cleanLabel(rawLabel);
  const leftTuple = parseTuple(leftEnd);
  const rightTuple = parseTuple(rightEnd);

  if (leftTuple !== undefined || rightTuple !== undefined) {
    if (leftTuple !== undefined && rightTuple !== undefined) {
      return { type: 'unreadable', reason: 'both ends are association tuples' };
    }
    if (leftHead !== '' || rightHead !== '') {
      return { type: 'unreadable', reason: 'an association-class link must be a plain line (no arrow head)' };
    }
    const ends = (leftTuple ?? rightTuple)!;
    return { type: 'association-class', ends, cls: unquote(leftTuple === undefined ? leftEnd : rightEnd) };
  }

  const left = { name: unquote(leftEnd), multiplicity: leftMult?.trim() || undefined };
  const right = { name: unquote(rightEnd), multiplicity: rightMult?.trim() || undefined };
  const relation = (kind: PlantUmlRelationKind, from: typeof left, to: typeof left): RawLink => ({
    type: 'relation',
    from: from.name,
    to: to.name,
    kind,
    lineStyle,
    ...optional('fromMultiplicity', from.multiplicity),
    ...optional('toMultiplicity', to.multiplicity),
    ...optional('label', label),
    hidden,
  });
  const heads = `"${leftHead}" and "${rightHead}"`;
  const other = (head: string): string => (leftHead === head ? rightHead : leftHead);
  const plain = (head: string): boolean => head === '' || head === '<' || head === '>' || head === 'x';

  if (leftHead === '<|' || rightHead === '|>') {
    if (leftHead === '<|' && rightHead !== '')
      return { type: 'unreadable', reason: `conflicting arrow heads ${heads}` };
    if (rightHead === '|>' && leftHead !== '')
      return { type: 'unreadable', reason: `conflicting arrow heads ${heads}` };
    return leftHead === '<|' ? relation('inheritance', right, left) : relation('inheritance', left, right);
  }
  for (const [head, kind] of [
    ['*', 'composition'],
    ['o', 'aggregation'],
  ] as const) {
    if (leftHead !== head && rightHead !== head) continue;
    if (!plain(other(head))) return { type: 'unreadable', reason: `conflicting arrow heads ${heads}` };
    return leftHead === head ? relation(kind, left, right) : relation(kind, right, left);
  }
  if (!plain(leftHead) || !plain(rightHead)) {
    return { type: 'unreadable', reason: `arrow head ${plain(leftHead) ? rightHead : leftHead} is not read` };
  }
  const pointsRight = rightHead === '>';
  const pointsLeft = leftHead === '<';
  if (lineStyle === 'dashed' && pointsRight !== pointsLeft) {
    return pointsRight ? relation('dependency', left, right) : relation('dependency', right, left);
  }
  return relation('association', left, right);
}
