/**
 * The default contrast of a calibration (src/calibration/calibration.ts): a
 * deliberately weakened copy of the incumbent, still a well-formed artifact
 * of its format.
 *
 * @module
 */
import { isMap, isScalar, isSeq, parseDocument, YAMLMap, YAMLSeq } from 'yaml';
import { InputError } from '../errors.ts';

/** Artifact formats {@link ablateArtifact} knows. */
export type ArtifactFormat = 'yaml' | 'markdown';

/**
 * A deliberately weakened copy of an artifact, the default contrast of a
 * calibration. The result is still a well-formed artifact of the same format.
 *
 * - **YAML** (a mapping of sections, such as the offline playbook): every
 *   top-level section holding a list or map of cues/terms is emptied (to `[]`
 *   or `{}`, so the file still parses); scalar sections (`defaultAppType:
 *   other`) and *settings blocks* — maps whose values are all scalars with at
 *   least one number or boolean (`extraction`, `unknownNounPolicy`) — are
 *   kept. For the playbook this leaves an extractor with grammar and settings
 *   but no knowledge.
 * - **Markdown** (a prompt): ATX heading lines (`#`…`######`, outside fenced
 *   code) are kept and every section body, preamble included, is dropped.
 *   A text with no heading ablates to the empty string.
 *
 * @param format `'yaml'`, `'markdown'`, or absent to detect: a text that
 *   parses as a non-empty YAML mapping is YAML, anything else markdown.
 * @returns the ablated text (equal to `text` when there was nothing to drop)
 *
 * @example
 * ```ts
 * ablateArtifact('defaultAppType: other\nstopList: [app]\nextraction: { maxEntities: 12 }\n');
 * // 'defaultAppType: other\nstopList: []\nextraction: { maxEntities: 12 }\n'
 * ```
 */
export function ablateArtifact(text: string, format?: ArtifactFormat): string {
  const resolved = format ?? detectFormat(text);
  return resolved === 'yaml' ? ablateYaml(text) : ablateMarkdown(text);
}

function detectFormat(text: string): ArtifactFormat {
  const doc = parseDocument(text);
  return doc.errors.length === 0 && isMap(doc.contents) && doc.contents.items.length > 0 ? 'yaml' : 'markdown';
}

function isSettingsBlock(node: unknown): boolean {
  if (!isMap(node) || node.items.length === 0) return false;
  let hasSetting = false;
  for (const pair of node.items) {
    if (!isScalar(pair.value)) return false;
    const value: unknown = pair.value.value;
    if (typeof value === 'number' || typeof value === 'boolean') hasSetting = true;
  }
  return hasSetting;
}

function ablateYaml(text: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || !isMap(doc.contents)) {
    throw new InputError('cannot ablate the artifact: it is not a YAML mapping of sections', {
      code: 'input.artifact',
    });
  }
  let changed = false;
  for (const pair of doc.contents.items) {
    const value = pair.value;
    if (isSeq(value) && value.items.length > 0) {
      const empty = new YAMLSeq();
      empty.flow = true;
      empty.comment = value.comment;
      pair.value = empty as unknown as typeof pair.value;
      changed = true;
    } else if (isMap(value) && value.items.length > 0 && !isSettingsBlock(value)) {
      const empty = new YAMLMap();
      empty.flow = true;
      empty.comment = value.comment;
      pair.value = empty as unknown as typeof pair.value;
      changed = true;
    }
  }
  return changed ? doc.toString() : text;
}

function ablateMarkdown(text: string): string {
  const kept: string[] = [];
  let fence: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    const fenceMatch = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch !== null) {
      const marker = fenceMatch[1]!;
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      continue;
    }
    if (fence === null && /^\s{0,3}#{1,6}(\s|$)/.test(line)) kept.push(line.trim());
  }
  return kept.length === 0 ? '' : `${kept.join('\n\n')}\n`;
}

/** The artifact format of a file name (`.yaml`/`.yml`, `.md`/`.markdown`); undefined for any other (then {@link ablateArtifact} detects it). */
export function formatFromPath(artifactPath: string): ArtifactFormat | undefined {
  const lower = artifactPath.toLowerCase();
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  if (lower.endsWith('.md') || lower.endsWith('.markdown')) return 'markdown';
  return undefined;
}
