/**
 * Which examples a playbook edit can change: a necessary condition the
 * screening uses to skip examples exactly.
 *
 * Pure.
 */
import { singularizeWord } from '../names.ts';
import type { ExampleEvidence } from './edit-evidence.ts';
import { nameKey } from './extract.ts';
import type { Playbook } from './playbook.ts';
import { normalizeTerm } from './playbook.ts';
import type { PlaybookEdit } from './playbook-edit.ts';

/**
 * Whether applying `edit` can change the extractor's output for an example: a
 * necessary condition, so skipping examples for which it is false is exact.
 * Phrase edits can only matter where every word of the phrase occurs; an app
 * type's defaults only where that type is predicted; a role suffix rule only
 * where a lemma ends with the suffix; anything else is assumed to matter
 * everywhere.
 */
export function editMayAffect(edit: PlaybookEdit, playbook: Playbook, example: ExampleEvidence): boolean {
  const [section, key] = edit.path;
  const mentions = (phrase: string): boolean =>
    normalizeTerm(phrase)
      .split(' ')
      .every((word) => example.analysis.keySet.has(word) || example.analysis.keySet.has(singularizeForm(word)));
  switch (section) {
    case 'appTypeCues':
    case 'behaviorCues':
    case 'projectionCues':
      return edit.op === 'delete' || edit.op === 'set' || mentions((edit as { value: string }).value);
    case 'stopList':
      return edit.op === 'delete' || edit.op === 'set' || mentions((edit as { value: string }).value);
    case 'entityAliases':
    case 'relationCues':
    case 'cardinalityCues':
      return key === undefined || mentions(key);
    case 'attributeTerms':
      return edit.op === 'delete' || edit.op === 'set' || mentions((edit as { value: string }).value);
    case 'entityTerms': {
      if (edit.op === 'setMany')
        return Object.keys(edit.entries).some((term) =>
          editMayAffect({ op: 'set', path: ['entityTerms', term], value: '' }, playbook, example),
        );
      if (key === undefined) return true;
      if (mentions(key)) return true;
      // An alias whose canonical name is this term takes its role from it.
      const termName = nameKey(key);
      return Object.entries(playbook.entityAliases).some(
        ([alias, canonical]) => nameKey(canonical) === termName && mentions(alias),
      );
    }
    case 'appTypeDefaults':
      return key === undefined || example.predictedAppType === key;
    case 'roleSuffixes': {
      // A suffix rule only decides the role of a noun the playbook does not know (entity-mentions.ts, unknownRole),
      // given the lemma of a word of the text or the last word of an alias's canonical name, and only where that
      // ends with the suffix.
      if (key === undefined) return true;
      const suffix = key.toLowerCase();
      const ends = (lemma: string): boolean => lemma.length > suffix.length + 1 && lemma.endsWith(suffix);
      return (
        example.analysis.words.some((word) => ends(word.lemma)) ||
        Object.values(playbook.entityAliases).some((canonical) => ends(nameKey(canonical).split(' ').pop() ?? ''))
      );
    }
    default:
      return true;
  }
}

function singularizeForm(word: string): string {
  const parts = word.split('-');
  const last = parts.length - 1;
  parts[last] = singularizeWord(parts[last]!);
  return parts.join('-');
}
