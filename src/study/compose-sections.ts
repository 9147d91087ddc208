/** How a study's artifact is split into named sections (program.md's `editableSections`), by its executor and file type. */
import path from 'node:path';
import { markdownSections, PREAMBLE_SECTION } from '../artifact/markdown-sections.ts';
import { playbookSections } from '../tasks/intent/offline/playbook.ts';
import type { StudyConfig } from '../config/config.ts';

/** Extensions of a `command` artifact read as YAML or JSON (top-level keys are its sections). */
export const DATA_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
/** Extensions of a `command` artifact read as markdown (`##` headings are its sections). */
const MARKDOWN_EXTENSIONS = new Set(['.md', '.markdown']);

/**
 * How the study's artifact is split into named sections (program.md's
 * `editableSections`):
 *
 * | executor | sections |
 * |---|---|
 * | `offline` | the playbook's top-level sections |
 * | `routing-rules` | the rules file's top-level keys ({@link topLevelYamlSections}) |
 * | `command` | by the artifact's extension: `.yaml`, `.yml`, `.json` its top-level keys; `.md`, `.markdown` its `##` sections; any other file (a plain text, a script) is one section, `(preamble)`, the whole text ({@link wholeTextSection}) |
 * | `llm` | the prompt's markdown `##` sections |
 *
 * A plain text is never read as YAML: a line such as `Note: refunds go to
 * billing` is text, not a section.
 *
 * @throws Error (from the returned function) when the artifact cannot be split
 */
export function composeSectionsOf(
  config: Pick<StudyConfig, 'executor'> & { artifact?: string },
): (text: string) => Record<string, string> {
  if (config.executor.kind === 'offline') {
    return (text) => {
      const sections = playbookSections(text);
      if (sections === null) throw new Error('the artifact is not a readable playbook');
      return sections;
    };
  }
  if (config.executor.kind === 'routing-rules') return topLevelYamlSections;
  if (config.executor.kind === 'command') {
    const extension = path.extname(config.artifact ?? '').toLowerCase();
    if (DATA_EXTENSIONS.has(extension)) return topLevelYamlSections;
    if (MARKDOWN_EXTENSIONS.has(extension)) return markdownSections;
    return wholeTextSection;
  }
  return markdownSections;
}

/** A text that has no sections: one, `(preamble)` (as the text before the first key or heading of the other formats), the whole text. */
export function wholeTextSection(text: string): Record<string, string> {
  return { [PREAMBLE_SECTION]: text };
}

/**
 * The top-level sections of a YAML (or JSON) file, for a rules artifact:
 * a line starting at column 0 with `key:` opens section `key`, which runs to
 * the next such line; comments and blank lines before the first key are the
 * `(preamble)`. A JSON file (starting with `{`) gives each top-level key's
 * value as stable JSON. Byte-exact for YAML: a section's text is its lines.
 */
export function topLevelYamlSections(text: string): Record<string, string> {
  if (text.trimStart().startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key, JSON.stringify(value)]));
    } catch {
      return { '(preamble)': text };
    }
  }
  const sections: Record<string, string> = {};
  let name = '(preamble)';
  let lines: string[] = [];
  const flush = (): void => {
    if (lines.length > 0 || name !== '(preamble)') sections[name] = lines.join('\n');
  };
  for (const line of text.split('\n')) {
    const key = /^([A-Za-z_][\w-]*)\s*:/.exec(line);
    if (key !== null) {
      flush();
      name = key[1]!;
      lines = [];
    }
    lines.push(line);
  }
  flush();
  return sections;
}
