import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readIntentCorpus } from '../../test-support/intent-examples.ts';
import { loadCompromise, loadSingularRules } from './load-compromise.ts';
import { normalizeEntityName, singularizeWord } from './names.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../../examples/intent/corpus');

describe('singularisation without loading the whole of compromise', () => {
  it("gives the world's answer for every word of the reference corpus, and for irregular plurals", () => {
    const world = loadCompromise().world() as unknown as {
      methods: { two: { transform: { noun: { toSingular: (word: string, model: unknown) => string } } } };
      model: { two: { irregularPlurals: Record<string, string> } };
    };
    const rules = loadSingularRules();
    // The modules of the ES build that the bundle's world is built from: the same table, the same answers.
    expect(rules.toSingular).not.toBe(world.methods.two.transform.noun.toSingular);
    expect(rules.irregularPlurals).toEqual(world.model.two.irregularPlurals);
    const text = readdirSync(CORPUS)
      .map((file) => readFileSync(path.join(CORPUS, file), 'utf8'))
      .join(' ');
    const words = new Set([...text.toLowerCase().matchAll(/[a-z]{4,}/g)].map((match) => match[0]));
    for (const plural of Object.values(world.model.two.irregularPlurals)) words.add(plural);
    expect(words.size).toBeGreaterThan(1000);
    const differing = [...words].filter(
      (word) => rules.toSingular(word, world.model) !== world.methods.two.transform.noun.toSingular(word, world.model),
    );
    expect(differing).toEqual([]);
  });

  it("loads only compromise's singularisation modules, not the library (a fresh process)", () => {
    const script = [
      "import { createRequire } from 'node:module';",
      "import { singularizeWord } from './src/tasks/intent/names.ts';",
      "const word = singularizeWord('categories');",
      "const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes('compromise')).map((file) => file.replace(/.*compromise[\\\\/]/, '').replaceAll('\\\\', '/'));",
      'console.log(JSON.stringify({ word, loaded }));',
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(import.meta.dirname, '../../..'),
      encoding: 'utf8',
    });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout) as unknown).toEqual({
      word: 'category',
      loaded: [
        'src/2-two/preTagger/methods/transform/nouns/toSingular/index.js',
        'src/2-two/preTagger/methods/transform/nouns/toSingular/_rules.js',
        'src/2-two/preTagger/model/irregulars/plurals.js',
      ],
    });
  });

  it("is compromise's CommonJS bundle, which tags every goal of the reference corpus as its ES module does", async () => {
    const bundle = loadCompromise();
    const esm = ((await import('compromise')) as unknown as { default: typeof bundle }).default;
    expect(bundle).not.toBe(esm);
    const goals = readdirSync(CORPUS).flatMap((file) =>
      readIntentCorpus(path.join(CORPUS, file)).map((example) => example.text),
    );
    expect(goals.length).toBeGreaterThan(50);
    // A term's id ends in a random character; everything else (tags, chunks, normal forms, indexes) must match.
    const tagged = (nlp: typeof bundle, goal: string): string =>
      JSON.stringify(nlp(goal).json(), (key, value: unknown) => (key === 'id' ? undefined : value));
    for (const goal of goals) expect(tagged(bundle, goal)).toBe(tagged(esm, goal));
  });

  it('singularises head nouns as the scorer compares them', () => {
    expect(
      ['categories', 'children', 'boxes', 'statuses', 'leaves', 'analysis', 'people'].map(singularizeWord),
    ).toEqual(['category', 'child', 'box', 'status', 'leave', 'analysis', 'person']);
    expect(normalizeEntityName('PurchaseOrders')).toBe('purchase order');
    expect(normalizeEntityName('purchase_order')).toBe('purchase order');
  });
});
