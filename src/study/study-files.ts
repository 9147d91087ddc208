/**
 * The study's own files as `loadStudy` (src/study/load-study.ts) reads and
 * checks them: text files in UTF-8, program.md's editable sections against
 * the artifact, and an LLM prompt template's placeholders against the corpus.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { StudyConfig } from '../config/config.ts';
import type { Example } from '../corpus/example.ts';
import { InputError } from '../errors.ts';
import { fillPromptTemplate, readPromptTemplate } from '../executors/llm/prompt-template.ts';

/**
 * Refuses an `editableSections` entry of program.md that names no section of
 * the artifact: a typo would otherwise freeze the section meant, and allow
 * nothing. Names program.md, the line of the entry and its index.
 */
export function checkEditableSections(
  editable: readonly string[] | undefined,
  artifactText: string,
  sectionsOf: (text: string) => Record<string, string>,
  config: StudyConfig,
  constraintsLine: number,
): void {
  if (editable === undefined) return;
  let sections: Record<string, string>;
  try {
    sections = sectionsOf(artifactText);
  } catch {
    return; // an unreadable artifact is reported by its own check, with its own location
  }
  const names = Object.keys(sections);
  editable.forEach((name, index) => {
    if (Object.hasOwn(sections, name)) return;
    const lines = readTextFile(config.program, 'the program file').split('\n');
    const found = lines.findIndex(
      (line, at) =>
        at >= constraintsLine - 1 &&
        new RegExp(`(^|[^\\w-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w-]|$)`).test(line),
    );
    throw new InputError(
      `"${name}" is no section of the artifact ${path.basename(config.artifact)} (its sections: ${names.join(', ') || 'none'})`,
      {
        file: config.program,
        ...(found >= 0 ? { line: found + 1 } : {}),
        field: `editableSections[${index}]`,
        code: 'input.program',
      },
    );
  });
}

/**
 * Refuses a prompt artifact (an `llm` executor's template) that no model
 * call could be made with: a malformed placeholder (`{{#if vip}}`,
 * `{{input.a.b}}`), or one an example of the corpus files cannot fill (a
 * field its input does not have, a field of a text input). Checked when the
 * study loads, not at the first model call; names the artifact file, the
 * line and the placeholder, and for a field, the first example that lacks it.
 *
 * @throws InputError (code `input.artifact`)
 */
export function checkPromptTemplate(config: StudyConfig, artifactText: string, examples: readonly Example[]): void {
  const withoutLine = (message: string): string => message.replace(/^line \d+: /, '');
  const reading = readPromptTemplate(artifactText);
  if (!reading.ok)
    throw new InputError(withoutLine(reading.message), {
      file: config.artifact,
      line: reading.line,
      code: 'input.artifact',
    });
  if (reading.placeholders.length === 0) return;
  for (const example of examples) {
    const filled = fillPromptTemplate(artifactText, example.input, example.text);
    if (filled.ok) continue;
    throw new InputError(
      `${withoutLine(filled.message).replace("this example's input", `example "${example.id}"'s input`)}`,
      {
        file: config.artifact,
        ...(filled.line !== undefined ? { line: filled.line } : {}),
        code: 'input.artifact',
      },
    );
  }
}

/** Reads a UTF-8 text file, refusing invalid UTF-8 with a clear error. */
export function readTextFile(file: string, what: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(
      code === 'ENOENT' ? `${what} does not exist` : `cannot read ${what}: ${(error as Error).message}`,
      { file },
    );
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new InputError(`${what} is not valid UTF-8`, { file });
  }
}
