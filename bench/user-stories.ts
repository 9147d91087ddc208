/**
 * Reads the user-story sets of `../shared/data/user-stories/` (Maximbrg/
 * Material-RE24, RE 2024: "Deriving Domain Models from User Stories: Human
 * vs. Machines") as examples with partial gold, for `bench:external` only.
 * The data is read in place and never copied into the repository (its
 * SOURCE.md: evaluation use only).
 *
 * Mapping (from SOURCE.md): the whole set of stories is one goal text;
 * `gold.entities` are entities without roles, except that an entity named
 * like a story actor ("As a <role>, …") is a `party` (a fair check of role
 * extraction); `gold.relations` are relations without cardinality. Names are
 * as the taggers wrote them (plural or lower case); entities with the same
 * normalised name are merged. Actor strings longer than four words are
 * tagging debris and are ignored.
 *
 * File format: `{ id, source, stories: string[], gold: { entities: string[],
 * relations: [{ from, to }] }, actors: string[] }`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { exampleSchema, intentExample, type IntentExample } from '../src/corpus/intent-example.ts';
import type { ExpectedEntity, Relation } from '../src/tasks/intent/intent.ts';
import { normalizeEntityName } from '../src/tasks/intent/names.ts';

interface StorySet {
  id: string;
  stories: string[];
  gold: { entities: string[]; relations: Array<{ from: string; to: string }> };
  actors: string[];
}

/** The examples of every `*.json` story set in `dir`, in file-name order, and what was skipped. */
export function importUserStories(dir: string): { examples: IntentExample[]; skipped: string[] } {
  const examples: IntentExample[] = [];
  const skipped: string[] = [];
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    const where = path.join(dir, file);
    let set: StorySet;
    try {
      set = JSON.parse(readFileSync(where, 'utf8').replace(/^\uFEFF/, '')) as StorySet;
    } catch (error) {
      skipped.push(`${file}: not JSON (${(error as Error).message})`);
      continue;
    }
    const actors = new Set(
      (set.actors ?? [])
        .filter((actor) => actor.trim().split(/\s+/).length <= 4)
        .map((actor) => normalizeEntityName(actor)),
    );
    const entities: ExpectedEntity[] = [];
    const seen = new Set<string>();
    for (const name of set.gold?.entities ?? []) {
      const key = normalizeEntityName(name);
      if (key === '' || seen.has(key)) continue;
      seen.add(key);
      entities.push(actors.has(key) ? { name, role: 'party' } : { name });
    }
    const relations: Relation[] = (set.gold?.relations ?? [])
      .filter((relation) => relation.from.trim() !== '' && relation.to.trim() !== '')
      .map((relation) => ({ from: relation.from, to: relation.to }));
    const goal = (set.stories ?? [])
      .map((story) => story.replace(/^\uFEFF/, '').trim())
      .filter((story) => story !== '')
      .join('\n');
    const parsed = exampleSchema.safeParse({
      id: `user-stories:${path.basename(file, '.json')}`.replace(/[^A-Za-z0-9._:-]/g, '-'),
      goal,
      expected: { entities, relations },
      tags: ['source:user-stories'],
      partition: 'shadow',
    });
    if (parsed.success) examples.push(intentExample(parsed.data));
    else skipped.push(`${file}: ${parsed.error.issues[0]?.message ?? 'invalid example'}`);
  }
  return { examples, skipped };
}
