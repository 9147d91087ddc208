/**
 * The product's own labelled corpus (examples/intent/corpus): schema, size,
 * partitions, coverage and the grounding rule (every gold entity is named in
 * its goal text).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, expect } from 'vitest';
import { parse } from 'yaml';
import { exampleSchema, type IntentExampleRecord } from '../src/corpus/intent-example.ts';
import { acceptedAppTypes } from '../src/tasks/intent/intent.ts';
import { normalizeEntityName } from '../src/tasks/intent/names.ts';

const CORPUS_DIR = fileURLToPath(new URL('../examples/intent/corpus/', import.meta.url));

/** The ten core app shapes, one anchor each. */
const ANCHOR_SHAPES = [
  'booking',
  'marketplace',
  'crm',
  'inventory',
  'helpdesk',
  'project_management',
  'membership',
  'learning',
  'field_service',
  'expenses',
];

interface LoadedExample {
  file: string;
  example: IntentExampleRecord;
}

/** Raw records of one corpus file: a YAML top-level list, or JSON Lines. */
function readRecords(file: string): unknown[] {
  const text = readFileSync(join(CORPUS_DIR, file), 'utf8');
  if (file.endsWith('.jsonl')) {
    return text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown);
  }
  const parsed = parse(text) as unknown;
  if (!Array.isArray(parsed)) throw new Error(`${file}: expected a top-level list of records`);
  return parsed;
}

function corpusFiles(): string[] {
  return readdirSync(CORPUS_DIR)
    .filter((file) => /\.(ya?ml|jsonl)$/.test(file))
    .sort();
}

function loadCorpus(): LoadedExample[] {
  const loaded: LoadedExample[] = [];
  for (const file of corpusFiles()) {
    readRecords(file).forEach((record, index) => {
      const result = exampleSchema.safeParse(record);
      if (!result.success) {
        throw new Error(`${file} record #${index + 1}: ${result.error.message}`);
      }
      loaded.push({ file, example: result.data });
    });
  }
  return loaded;
}

/**
 * Every normalised key a goal text offers: each 1-, 2- and 3-word window of the
 * lower-cased, punctuation-free text, as spaced words and concatenated.
 */
function goalKeys(goal: string): Set<string> {
  const words = goal
    .normalize('NFKC')
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter((word) => word !== '');
  const keys = new Set<string>();
  for (let start = 0; start < words.length; start += 1) {
    for (let size = 1; size <= 3 && start + size <= words.length; size += 1) {
      const window = words.slice(start, start + size);
      keys.add(normalizeEntityName(window.join(' ')));
      keys.add(normalizeEntityName(window.join('')));
    }
  }
  return keys;
}

function primaryAppType(example: IntentExampleRecord): string {
  const accepted = acceptedAppTypes(example.expected);
  if (accepted.length === 0) throw new Error(`${example.id}: no appType`);
  return accepted[0]!;
}

function voiceOf(example: IntentExampleRecord): string | undefined {
  return example.tags.find((tag) => tag.startsWith('voice:'));
}

const corpus = loadCorpus();
const examples = corpus.map((entry) => entry.example);

describe('intent corpus', () => {
  it('has YAML files and one JSON Lines file, every record valid', () => {
    const files = corpusFiles();
    expect(files.filter((file) => file.endsWith('.jsonl'))).toEqual(['extra.jsonl']);
    expect(files.filter((file) => /\.ya?ml$/.test(file)).length).toBeGreaterThanOrEqual(2);
    const jsonl = corpus.filter((entry) => entry.file === 'extra.jsonl').length;
    expect(jsonl).toBeGreaterThanOrEqual(8);
    expect(jsonl).toBeLessThanOrEqual(12);
  });

  it('has at least 66 examples with unique ids', () => {
    expect(examples.length).toBeGreaterThanOrEqual(66);
    const ids = examples.map((example) => example.id);
    const duplicates = ids.filter((id, index) => ids.indexOf(id) !== index);
    expect(duplicates).toEqual([]);
  });

  it('covers at least 10 app types, every listed one at least 3 times', () => {
    const counts = new Map<string, number>();
    for (const example of examples) {
      const type = primaryAppType(example);
      counts.set(type, (counts.get(type) ?? 0) + 1);
    }
    expect(counts.size).toBeGreaterThanOrEqual(10);
    for (const [type, count] of counts) {
      expect(type, 'no gold uses "other"').not.toBe('other');
      expect(count, `app type ${type}`).toBeGreaterThanOrEqual(3);
    }
  });

  it('has exactly 10 anchors, one per core app shape', () => {
    const anchors = examples.filter((example) => example.partition === 'anchor');
    expect(anchors).toHaveLength(10);
    expect(anchors.map(primaryAppType).sort()).toEqual([...ANCHOR_SHAPES].sort());
  });

  it('has at least 20 shadow examples drawn from the same mix as optimization', () => {
    const shadow = examples.filter((example) => example.partition === 'shadow');
    const optimization = examples.filter((example) => example.partition === 'optimization');
    expect(shadow.length).toBeGreaterThanOrEqual(20);
    expect(optimization.length).toBeGreaterThan(shadow.length);
    const optimizationTypes = new Set(optimization.map(primaryAppType));
    const optimizationVoices = new Set(optimization.map(voiceOf));
    for (const example of shadow) {
      expect(optimizationTypes.has(primaryAppType(example)), `${example.id} app type`).toBe(true);
      expect(optimizationVoices.has(voiceOf(example)), `${example.id} voice`).toBe(true);
    }
  });

  it('gives every example an app type, entities, relations, behaviours, projections and a voice', () => {
    for (const example of examples) {
      const { expected } = example;
      expect(acceptedAppTypes(expected).length, example.id).toBeGreaterThan(0);
      expect(expected.entities?.length ?? 0, `${example.id} entities`).toBeGreaterThanOrEqual(3);
      expect(expected.entities?.length ?? 0, `${example.id} entities`).toBeLessThanOrEqual(8);
      expect(expected.relations?.length ?? 0, `${example.id} relations`).toBeGreaterThanOrEqual(2);
      expect(expected.relations?.length ?? 0, `${example.id} relations`).toBeLessThanOrEqual(6);
      expect(expected.behaviors?.length ?? 0, `${example.id} behaviors`).toBeGreaterThanOrEqual(1);
      expect(expected.behaviors?.length ?? 0, `${example.id} behaviors`).toBeLessThanOrEqual(5);
      expect(expected.projections?.length ?? 0, `${example.id} projections`).toBeGreaterThanOrEqual(1);
      expect(expected.projections?.length ?? 0, `${example.id} projections`).toBeLessThanOrEqual(4);
      expect(voiceOf(example), `${example.id} voice tag`).toBeDefined();
      for (const entity of expected.entities ?? []) {
        expect(entity.role, `${example.id} ${entity.name} role`).toBeDefined();
      }
    }
  });

  it('keeps entity names unique within an example and relations between gold entities', () => {
    for (const example of examples) {
      const names = (example.expected.entities ?? []).map((entity) => normalizeEntityName(entity.name));
      expect(new Set(names).size, `${example.id} duplicate entity`).toBe(names.length);
      const known = new Set(names);
      for (const relation of example.expected.relations ?? []) {
        expect(known.has(normalizeEntityName(relation.from)), `${example.id} ${relation.from}`).toBe(true);
        expect(known.has(normalizeEntityName(relation.to)), `${example.id} ${relation.to}`).toBe(true);
        expect(relation.cardinality, `${example.id} cardinality`).toBeDefined();
        expect(relation.kind, `${example.id} kind`).toBeDefined();
      }
    }
  });

  it('grounds every gold entity (its name or an alias) in the goal text', () => {
    const ungrounded: string[] = [];
    for (const example of examples) {
      const keys = goalKeys(example.goal);
      for (const entity of example.expected.entities ?? []) {
        const candidates = [entity.name, ...(entity.aliases ?? [])];
        if (!candidates.some((candidate) => keys.has(normalizeEntityName(candidate)))) {
          ungrounded.push(`${example.id}: ${entity.name}`);
        }
      }
    }
    expect(ungrounded).toEqual([]);
  });

  it('grounds every alias in the goal text too', () => {
    const ungrounded: string[] = [];
    for (const example of examples) {
      const keys = goalKeys(example.goal);
      for (const entity of example.expected.entities ?? []) {
        for (const alias of entity.aliases ?? []) {
          if (!keys.has(normalizeEntityName(alias))) ungrounded.push(`${example.id}: ${entity.name} ~ ${alias}`);
        }
      }
    }
    expect(ungrounded).toEqual([]);
  });
});
