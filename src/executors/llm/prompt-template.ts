/**
 * Prompt templates: a prompt artifact may name parts of an example's input
 * with placeholders, filled in for each execution.
 *
 * | placeholder | filled with |
 * |---|---|
 * | `{{input}}` | the input's text (the task's `text(input)`), whatever the input's shape |
 * | `{{input.<field>}}` | the field of an object input |
 * | `{{<field>}}` | the same, shorter (`input` itself always means the whole text: write `{{input.input}}` for a field named `input`) |
 *
 * Spaces inside the braces are allowed (`{{ input.subject }}`). Field names
 * are letters, digits, `_` and `-` (a bare `{{<field>}}` starts with a
 * letter or `_`); a field with another name is reachable through
 * `{{input}}` only. A text field is inserted as it is; any other value
 * (number, boolean, null, list, object) as stable JSON. Values are
 * inserted once: braces inside a value are not read as placeholders.
 *
 * Every `{{…}}` on one line is a placeholder; there is no escape. One that
 * is not of the three forms above (`{{#if x}}`, `{{input.a.b}}`, `{{}}`) is
 * an error of the template, and so is a field the example's input does not
 * have, or any field of an input that is a text: such a template is never
 * sent with a placeholder left in it or filled with nothing. These problems
 * are returned (never thrown), with the placeholder and its line. A study's
 * seed prompt is checked when the study loads (src/study/load-study.ts):
 * a malformed placeholder, or one no example's input can fill, is an
 * InputError naming the artifact file, the line and the placeholder, before
 * any model call; a candidate's prompt with such a problem is invalid for
 * the examples it cannot be filled for (never sent).
 *
 * @module
 */
import { stableJson } from '../../text/stable-json.ts';

/** One placeholder of a template. */
export interface Placeholder {
  /** The placeholder as written, e.g. `{{ input.subject }}`. */
  source: string;
  /** The input field it names; absent for `{{input}}` (the whole text). */
  field?: string;
  /** Character offset of `{{` in the template. */
  offset: number;
  /** 1-based line of `{{` in the template. */
  line: number;
}

/** The placeholders of a template, or its first problem: the message (`line N: …`), the 1-based line and the placeholder as written. */
export type TemplateReading =
  | { ok: true; placeholders: Placeholder[] }
  | { ok: false; message: string; line: number; placeholder: string };

/** A filled template, or the first problem: the message (`line N: …`) and, for a placeholder at fault, its line and the placeholder as written. */
export type FilledTemplate =
  | { ok: true; text: string; placeholders: number }
  | { ok: false; message: string; line?: number; placeholder?: string };

const SPAN = /\{\{([^{}\n]*)\}\}/g;
const NAME = /^\s*(?:input(?:\.([A-Za-z0-9_-]+))?|([A-Za-z_][A-Za-z0-9_-]*))\s*$/;

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line += 1;
  return line;
}

/**
 * Finds the placeholders of a template, in order.
 *
 * @example
 * ```ts
 * readPromptTemplate('Ticket:\n{{ subject }}\n{{input.body}}');
 * // { ok: true, placeholders: [{ source: '{{ subject }}', field: 'subject', offset: 8, line: 2 }, { source: '{{input.body}}', field: 'body', offset: 22, line: 3 }] }
 * readPromptTemplate('{{#if vip}}'); // { ok: false, message: 'line 1: "{{#if vip}}" is not a placeholder: …' }
 * ```
 */
export function readPromptTemplate(template: string): TemplateReading {
  const placeholders: Placeholder[] = [];
  for (const match of template.matchAll(SPAN)) {
    const offset = match.index;
    const line = lineAt(template, offset);
    const name = NAME.exec(match[1]!);
    if (name === null) {
      return {
        ok: false,
        message: `line ${line}: "${match[0]}" is not a placeholder: write {{input}} (the input's text), {{input.<field>}} or {{<field>}} (a field of an object input)`,
        line,
        placeholder: match[0],
      };
    }
    const field = name[1] ?? name[2];
    placeholders.push({ source: match[0], ...(field !== undefined ? { field } : {}), offset, line });
  }
  return { ok: true, placeholders };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Fills a template's placeholders for one example (see the module comment).
 *
 * @param template the prompt artifact
 * @param input the example's input (a text, or an object whose fields placeholders name)
 * @param text the input's text (the task's `text(input)`), for `{{input}}`
 * @returns the filled text and how many placeholders it had (0: the template, unchanged), or the first problem
 * @example
 * ```ts
 * fillPromptTemplate('Subject: {{subject}}\n\n{{input}}', { subject: 'Refund' }, 'subject: Refund');
 * // { ok: true, text: 'Subject: Refund\n\nsubject: Refund', placeholders: 2 }
 * fillPromptTemplate('{{customer}}', { subject: 'Refund' }, 'subject: Refund');
 * // { ok: false, message: 'line 1: the prompt names {{customer}}, but this example\'s input has no field "customer" (its fields: subject)' }
 * ```
 */
export function fillPromptTemplate(template: string, input: unknown, text: string): FilledTemplate {
  const reading = readPromptTemplate(template);
  if (!reading.ok) return reading;
  if (reading.placeholders.length === 0) return { ok: true, text: template, placeholders: 0 };
  const parts: string[] = [];
  let position = 0;
  for (const placeholder of reading.placeholders) {
    parts.push(template.slice(position, placeholder.offset));
    position = placeholder.offset + placeholder.source.length;
    if (placeholder.field === undefined) {
      parts.push(text);
      continue;
    }
    const field = placeholder.field;
    if (!isRecord(input)) {
      const shape =
        typeof input === 'string'
          ? 'a text'
          : Array.isArray(input)
            ? 'a list'
            : input === null
              ? 'null'
              : `a ${typeof input}`;
      return {
        ok: false,
        message: `line ${placeholder.line}: the prompt names ${placeholder.source}, but this example's input is ${shape}, not an object with fields; write {{input}} for its text`,
        line: placeholder.line,
        placeholder: placeholder.source,
      };
    }
    if (!Object.hasOwn(input, field) || input[field] === undefined) {
      const fields = Object.keys(input).sort();
      return {
        ok: false,
        message: `line ${placeholder.line}: the prompt names ${placeholder.source}, but this example's input has no field "${field}" (its fields: ${fields.length > 0 ? fields.join(', ') : 'none'})`,
        line: placeholder.line,
        placeholder: placeholder.source,
      };
    }
    const value = input[field];
    parts.push(typeof value === 'string' ? value : stableJson(value));
  }
  parts.push(template.slice(position));
  return { ok: true, text: parts.join(''), placeholders: reading.placeholders.length };
}
