/**
 * Reading the header of a PlantUML declaration, after its keyword:
 * `"Long Name" as LN <<Stereotype>> #colour extends A implements B, C {`.
 */

/** A PlantUML identifier, possibly package-qualified with dots (`billing.Invoice`). */
export const IDENTIFIER = String.raw`[\p{L}\p{N}_$]+(?:\.[\p{L}\p{N}_$]+)*`;

/** The parts of a declaration header; `leftover` is text that could not be read. */
export interface Header {
  name: string;
  alias?: string;
  stereotypes: string[];
  parents: { extends: string[]; implements: string[] };
  body: 'none' | 'open' | 'empty' | 'inline';
  inlineBody?: string;
  leftover?: string;
}

/** The text between double quotes, or the trimmed text when it is not quoted. */
export function unquote(text: string): string {
  const trimmed = text.trim();
  return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
}

/** Reads a declaration header after its keyword: name, alias, stereotypes, parents and body opener. */
export function parseHeader(rest: string): Header | undefined {
  let text = rest.trim();
  const nameMatch = new RegExp(String.raw`^(?:"([^"]+)"|(${IDENTIFIER})(?:<(?!<)[^<>]*>)?)`, 'u').exec(text);
  if (nameMatch === null) return undefined;
  const header: Header = {
    name: nameMatch[1] ?? nameMatch[2] ?? '',
    stereotypes: [],
    parents: { extends: [], implements: [] },
    body: 'none',
  };
  const quoted = nameMatch[1] !== undefined;
  text = text.slice(nameMatch[0].length);
  for (;;) {
    text = text.trimStart();
    if (text === '') break;
    let match: RegExpExecArray | null;
    if ((match = new RegExp(String.raw`^as\s+(?:"([^"]+)"|(${IDENTIFIER}))`, 'u').exec(text)) !== null) {
      if (match[1] !== undefined && !quoted) {
        header.alias = header.name;
        header.name = match[1];
      } else header.alias = match[2] ?? match[1];
    } else if ((match = /^<<(.+?)>>/.exec(text)) !== null) {
      const stereotype = (match[1] ?? '').replace(/^\s*\([^)]*\)\s*/, '').trim();
      if (stereotype !== '') header.stereotypes.push(stereotype);
    } else if (
      (match = /^(extends|implements)\s+(.+?)(?=\s*(?:\{|#|<<|\bextends\b|\bimplements\b|$))/.exec(text)) !== null
    ) {
      const names = (match[2] ?? '')
        .split(',')
        .map((name) => unquote(name.replace(/<[^<>]*>/g, '')))
        .filter(Boolean);
      header.parents[match[1] === 'extends' ? 'extends' : 'implements'].push(...names);
    } else if ((match = /^#{1,2}(?:\[[^\]]*\])?[\w#]*(?:[;/][\w#:.]*)*/.exec(text)) !== null && match[0].length > 1) {
      // A colour or line-style spec: layout only.
    } else if ((match = /^\{\s*\}$/.exec(text)) !== null) {
      header.body = 'empty';
    } else if ((match = /^\{(.*)\}$/.exec(text)) !== null) {
      header.body = 'inline';
      header.inlineBody = match[1]?.trim() ?? '';
    } else if ((match = /^\{(.*)$/.exec(text)) !== null) {
      header.body = 'open';
      header.inlineBody = match[1]?.trim() || undefined;
    } else {
      header.leftover = text;
      break;
    }
    text = text.slice(match[0].length);
  }
  return header;
}
