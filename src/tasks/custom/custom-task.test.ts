import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../errors.ts';
import { defaultWeights, weightedComposite } from '../task.ts';
import { CUSTOM_SCORER_ERROR, loadCustomTask, locateScorerError } from './custom-task.ts';
import { parseModuleReference } from './module-loader.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const folders: string[] = [];

/** A study folder in the system's temporary folder, holding the given files. */
function study(files: Record<string, string>): string {
  const folder = mkdtempSync(join(tmpdir(), 'kloop-custom-'));
  folders.push(folder);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text, 'utf8');
  return folder;
}

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function loadError(folder: string, module: string): Promise<InputError> {
  try {
    await loadCustomTask({ studyFolder: folder, module });
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected the load to fail');
}

function scoreError(run: () => unknown): InputError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).code).toBe(CUSTOM_SCORER_ERROR);
    return error as InputError;
  }
  throw new Error('expected the score to throw');
}

describe('loadCustomTask: a TypeScript scorer as a user writes it', () => {
  it('loads the fixture (an enum, zod, a relative .ts import), declares its components and scores with the study weights', async () => {
    const task = await loadCustomTask({ studyFolder: FIXTURES, module: 'route-score.ts' });
    const hash = createHash('sha256')
      .update(readFileSync(join(FIXTURES, 'route-score.ts')))
      .digest('hex');
    expect(task.id).toBe(`custom@${hash.slice(0, 16)}`);
    expect(task.file).toBe(join(FIXTURES, 'route-score.ts'));
    expect(defaultWeights(task)).toEqual({ label: 3, priority: 1 });
    const score = task.score(
      { label: 'technical', priority: 'high' },
      { label: 'billing', priority: 'high' },
      { subject: 'Invoice' },
      defaultWeights(task),
    );
    expect(score).toEqual({
      composite: 0.25,
      components: { label: 0, priority: 1 },
      diagnostics: {
        expected: { label: 'billing', priority: 'high' },
        predicted: { label: 'technical', priority: 'high' },
      },
      feedback: 'expected billing, routed to technical',
    });
    expect(
      task.score({ label: 'billing', priority: 'low' }, { label: 'billing', priority: 'high' }, 'x', {
        label: 1,
        priority: 1,
      }).composite,
    ).toBe(0.5);
    // The zod output schema decides validity.
    expect(task.schemas.output.safeParse({ label: 'billing', priority: 'urgent' }).success).toBe(false);
    expect(task.schemas.output.safeParse({ label: 'billing', priority: 'low' }).success).toBe(true);
    expect(task.outputContract!()).toContain('"priority":{"type":"string","enum":["low","high"]}');
    // Nothing is left in the study folder.
    expect(readdirSync(FIXTURES).filter((name) => name.includes('.kloop.'))).toEqual([]);
  });

  it('accepts a file:// path and a :functionName suffix, as promptfoo does', async () => {
    expect(parseModuleReference('file://scorers/route.ts:routeScore')).toEqual({
      path: 'scorers/route.ts',
      functionName: 'routeScore',
    });
    expect(parseModuleReference('score.js')).toEqual({ path: 'score.js' });
    const folder = study({ 'two.mjs': 'export const strict = (o, e) => o === e;\nexport const score = () => 0.5;\n' });
    const task = await loadCustomTask({ studyFolder: folder, module: 'file://two.mjs:strict' });
    expect(task.score('a', 'a', 'in', {}).composite).toBe(1);
    expect(task.score('a', 'b', 'in', {}).composite).toBe(0);
  });

  it('reads score.ts#name as score.ts:name, and names the function in the task id (another function is another fingerprint)', async () => {
    expect(parseModuleReference('score.ts#routeScore')).toEqual({ path: 'score.ts', functionName: 'routeScore' });
    expect(parseModuleReference('file://scorers/route.cjs#routeScore')).toEqual({
      path: 'scorers/route.cjs',
      functionName: 'routeScore',
    });
    expect(parseModuleReference('notes#1.ts')).toEqual({ path: 'notes#1.ts' }); // a # inside the file name is part of it
    const folder = study({ 'two.mjs': 'export const strict = (o, e) => o === e;\nexport const score = () => 0.5;\n' });
    const hash = (await loadCustomTask({ studyFolder: folder, module: 'two.mjs' })).id;
    expect(hash).toMatch(/^custom@[0-9a-f]{16}$/);
    const sharp = await loadCustomTask({ studyFolder: folder, module: 'two.mjs#strict' });
    const colon = await loadCustomTask({ studyFolder: folder, module: 'two.mjs:strict' });
    expect(sharp.score('a', 'b', 'in', {}).composite).toBe(0);
    expect(sharp.id).toBe(`${hash}:strict`);
    expect(colon.id).toBe(sharp.id);
    expect((await loadCustomTask({ studyFolder: folder, module: 'two.mjs:score' })).id).toBe(hash); // the default function, named
    await expect(loadCustomTask({ studyFolder: folder, module: 'two.mjs#lenient' })).rejects.toThrow(
      /exports no lenient function/,
    );
  });
});

describe('loadCustomTask: the return conventions', () => {
  it('a boolean is pass/fail, a number the score, { pass, score, reason } as promptfoo', async () => {
    const folder = study({
      'bool.cjs': 'module.exports = { score: (output, expected) => output.label === expected.label };\n',
      'number.mjs': 'export function score(output) { return output.length / 10; }\n',
      'promptfoo.js':
        'export default function (output, expected) { return { pass: output === expected, score: output === expected ? 1 : 0.25, reason: output === expected ? "" : `wanted ${expected}` }; }\n',
      'pass.mjs': 'export const score = (o, e) => ({ pass: o === e, reason: "checked" });\n',
    });
    const bool = await loadCustomTask({ studyFolder: folder, module: 'bool.cjs' });
    expect(bool.score({ label: 'a' }, { label: 'a' }, 'x', defaultWeights(bool))).toEqual({
      composite: 1,
      components: { score: 1 },
      diagnostics: {},
      feedback: '',
    });
    expect(bool.score({ label: 'a' }, { label: 'b' }, 'x', defaultWeights(bool)).composite).toBe(0);
    expect(defaultWeights(bool)).toEqual({ score: 1 });
    const number = await loadCustomTask({ studyFolder: folder, module: 'number.mjs' });
    expect(number.score('abc', null, 'x', {}).composite).toBe(0.3);
    const promptfoo = await loadCustomTask({ studyFolder: folder, module: 'promptfoo.js' });
    // pass decides (peer fault 5 of issue #36): a failed output scores 0 whatever its score; the score it gave stays in the diagnostics.
    expect(promptfoo.score('a', 'b', 'x', {})).toEqual({
      composite: 0,
      components: { score: 0 },
      diagnostics: { pass: false, score: 0.25 },
      feedback: 'wanted b',
    });
    expect(promptfoo.score('a', 'a', 'x', {})).toEqual({
      composite: 1,
      components: { score: 1 },
      diagnostics: { pass: true },
      feedback: '',
    });
    const pass = await loadCustomTask({ studyFolder: folder, module: 'pass.mjs' });
    expect(pass.score('a', 'a', 'x', {})).toEqual({
      composite: 1,
      components: { score: 1 },
      diagnostics: { pass: true },
      feedback: 'checked',
    });
  });

  it('reports components returned without a declaration as metrics, beside the composite', async () => {
    const folder = study({
      'score.mjs':
        'export const score = () => ({ score: 0.8, components: { tone: 0.5 }, feedback: "tone is flat" });\n',
    });
    const task = await loadCustomTask({ studyFolder: folder, module: 'score.mjs' });
    expect(task.score('o', 'e', 'i', defaultWeights(task))).toEqual({
      composite: 0.8,
      components: { score: 0.8 },
      metrics: { tone: 0.5 },
      diagnostics: {},
      feedback: 'tone is flat',
    });
  });

  it('declared components: the composite is their weighted mean, missing ones skipped', async () => {
    const folder = study({
      'score.ts': [
        "export const components: Array<string | { name: string; weight: number }> = ['label', { name: 'tone', weight: 2 }, { name: 'length', weight: 1 }];",
        'export function score(output: { label: string }, expected: { label: string; tone?: string }): object {',
        '  const result: Record<string, number> = { label: output.label === expected.label ? 1 : 0, length: 0.5 };',
        "  if (expected.tone !== undefined) result['tone'] = 1;",
        '  return { components: result, score: 0.123 };',
        '}',
      ].join('\n'),
    });
    const task = await loadCustomTask({ studyFolder: folder, module: 'score.ts' });
    expect(defaultWeights(task)).toEqual({ label: 1, tone: 2, length: 1 });
    const partial = task.score({ label: 'a' }, { label: 'a' }, 'i', defaultWeights(task));
    expect(partial.components).toEqual({ label: 1, length: 0.5 });
    expect(partial.skipped).toEqual(['tone']);
    expect(partial.composite).toBe(0.75);
    const full = task.score({ label: 'b' }, { label: 'a', tone: 'calm' }, 'i', defaultWeights(task));
    expect(full.composite).toBe((0 + 2 + 0.5) / 4);
    expect(full.composite).toBe(weightedComposite(full.components, defaultWeights(task)));
  });

  it('reads a JSON Schema output schema, and defaults to any JSON value', async () => {
    const folder = study({
      'schema.mjs':
        'export const outputSchema = { type: "object", properties: { label: { type: "string", enum: ["a", "b"] } }, required: ["label"] };\nexport const score = (o, e) => o.label === e.label;\n',
      'plain.mjs': 'export const score = () => 1;\n',
    });
    const schema = await loadCustomTask({ studyFolder: folder, module: 'schema.mjs' });
    expect(schema.schemas.output.safeParse({ label: 'a' }).success).toBe(true);
    expect(schema.schemas.output.safeParse({ label: 'c' }).success).toBe(false);
    expect(schema.schemas.output.safeParse('a').success).toBe(false);
    const plain = await loadCustomTask({ studyFolder: folder, module: 'plain.mjs' });
    expect(plain.schemas.output.safeParse({ any: ['json', 1, null] }).success).toBe(true);
    expect(plain.schemas.output.safeParse(undefined).success).toBe(false);
    expect(plain.schemas.output.safeParse(Number.NaN).success).toBe(false);
  });
});

describe('loadCustomTask: ESM and CommonJS, JavaScript and TypeScript', () => {
  it('loads .cts, CommonJS .ts, ESM .mts, a .ts that imports a sibling, and TypeScript-only syntax', async () => {
    const folder = study({
      'common.cts': 'const weight: number = 0.5;\nmodule.exports = { score: (): number => weight };\n',
      'common.ts': 'const half: number = 0.5;\nmodule.exports.score = function (): number { return half; };\n',
      'module.mts': 'export function score(output: string): number { return output === "ok" ? 1 : 0; }\n',
      'helper.ts': 'export enum Level { Low = 0, High = 1 }\nexport namespace Grades { export const pass = 1; }\n',
      'uses-helper.ts':
        "import { Level, Grades } from './helper.ts';\nexport const score = (o: string): number => (o === 'high' ? Level.High * Grades.pass : Level.Low);\n",
      'labels.json': '{ "accepted": ["x", "y"] }',
      'uses-json.ts':
        "import labels from './labels.json';\nexport const score = (o: string): boolean => labels.accepted.includes(o);\n",
    });
    expect((await loadCustomTask({ studyFolder: folder, module: 'common.cts' })).score(1, 1, 1, {}).composite).toBe(
      0.5,
    );
    expect((await loadCustomTask({ studyFolder: folder, module: 'common.ts' })).score(1, 1, 1, {}).composite).toBe(0.5);
    expect((await loadCustomTask({ studyFolder: folder, module: 'module.mts' })).score('ok', 1, 1, {}).composite).toBe(
      1,
    );
    expect(
      (await loadCustomTask({ studyFolder: folder, module: 'uses-helper.ts' })).score('high', 1, 1, {}).composite,
    ).toBe(1);
    expect((await loadCustomTask({ studyFolder: folder, module: 'uses-json.ts' })).score('y', 1, 1, {}).composite).toBe(
      1,
    );
    expect(readdirSync(folder).filter((name) => name.includes('.kloop.'))).toEqual([]);
  });

  it('gives a new id when the module file changes', async () => {
    const folder = study({ 'score.mjs': 'export const score = () => 1;\n' });
    const first = await loadCustomTask({ studyFolder: folder, module: 'score.mjs' });
    writeFileSync(join(folder, 'score.mjs'), 'export const score = () => 0;\n');
    const second = await loadCustomTask({ studyFolder: folder, module: 'score.mjs' });
    expect(second.id).not.toBe(first.id);
    expect(second.score(1, 1, 1, {}).composite).toBe(0);
  });
});

describe('loadCustomTask: a module that cannot be used is a clear error naming the file', () => {
  const folder = study({
    'none.mjs': 'export const scorer = () => 1;\n',
    'broken.ts': 'export function score(output: string {\n  return 1;\n}\n',
    'throws.mjs': 'throw new Error("missing API key");\n',
    'bad-schema.mjs': 'export const outputSchema = "string";\nexport const score = () => 1;\n',
    'bad-components.mjs': 'export const components = [{ name: "a", weight: -1 }];\nexport const score = () => 1;\n',
    'bad-outcome.mjs': 'export const outcome = "ordinal";\nexport const score = () => 1;\n',
    'score.py': 'def score(): pass\n',
  });
  const cases: Array<[string, RegExp, string | undefined]> = [
    ['none.mjs', /exports no score function/, 'score'],
    ['broken.ts', /cannot transpile the TypeScript module \(.*broken\.ts:1:\d+\): Expected/, undefined],
    ['throws.mjs', /cannot load the custom module: missing API key/, undefined],
    ['bad-schema.mjs', /outputSchema must be a zod 4 schema or a JSON Schema object/, 'outputSchema'],
    ['bad-components.mjs', /weight must be a number ≥ 0/, 'components[0].weight'],
    ['bad-outcome.mjs', /outcome must be "continuous" or "binary"/, 'outcome'],
    ['score.py', /must be JavaScript or TypeScript/, undefined],
    ['missing.ts', /does not exist/, undefined],
  ];
  for (const [module, message, field] of cases) {
    it(`${module}: ${message.source}`, async () => {
      const error = await loadError(folder, module);
      expect(error.message).toMatch(message);
      expect(error.file).toBe(join(folder, module));
      expect(error.message.startsWith(join(folder, module))).toBe(true);
      expect(error.code).toBe('custom_module');
      if (field !== undefined) expect(error.field).toBe(field);
    });
  }
});

describe('a scorer bug stops the run: it is never an outcome of the artifact', () => {
  const folder = study({
    'score.mjs': [
      'export function score(output) {',
      '  if (output === "throw") throw new TypeError("cannot read label");',
      '  if (output === "high") return 1.5;',
      '  if (output === "nan") return Number.NaN;',
      '  if (output === "promise") return Promise.resolve(1);',
      '  if (output === "text") return "good";',
      '  if (output === "nothing") return undefined;',
      '  if (output === "empty") return { reason: "no score" };',
      '  if (output === "bad-component") return { score: 1, components: { tone: 2 } };',
      '  return 1;',
      '}',
    ].join('\n'),
    'binary.mjs': 'export const outcome = "binary";\nexport const score = () => 0.5;\n',
    'declared.mjs':
      'export const components = ["label"];\nexport const score = () => ({ components: { labell: 1 } });\n',
  });

  it('names the file, the function and the example input', async () => {
    const task = await loadCustomTask({ studyFolder: folder, module: 'score.mjs' });
    const file = join(folder, 'score.mjs');
    const thrown = scoreError(() => task.score('throw', null, { subject: 'Refund please' }, {}));
    expect(thrown.message).toBe(
      `${file}: score() threw TypeError: cannot read label, for the example whose input is "{"subject":"Refund please"}"`,
    );
    expect(thrown.file).toBe(file);
    expect((thrown.cause as Error).message).toBe('cannot read label');
    const cases: Array<[string, RegExp]> = [
      ['high', /returned a score that must be a number in \[0, 1\]; got 1.5/],
      ['nan', /got NaN/],
      ['promise', /returned a Promise; kloop scores synchronously/],
      ['text', /returned "good"; return a boolean, a number in \[0, 1\] or \{ score, reason \}/],
      ['nothing', /returned nothing/],
      ['empty', /neither a score nor a pass/],
      ['bad-component', /component "tone" that must be a number in \[0, 1\]; got 2/],
    ];
    for (const [output, message] of cases)
      expect(scoreError(() => task.score(output, null, 'ticket text', {})).message).toMatch(message);
  });

  it('refuses a non-binary score from a binary scorer, and an undeclared component', async () => {
    const binary = await loadCustomTask({ studyFolder: folder, module: 'binary.mjs' });
    expect(binary.outcome).toBe('binary');
    expect(scoreError(() => binary.score(1, 1, 1, {})).message).toMatch(/declares outcome "binary"/);
    const declared = await loadCustomTask({ studyFolder: folder, module: 'declared.mjs' });
    expect(scoreError(() => declared.score(1, 1, 1, { label: 1 })).message).toMatch(
      /"labell", which the module does not declare in its components \(label\)/,
    );
  });

  it('the evaluator adds the example id', async () => {
    const task = await loadCustomTask({ studyFolder: folder, module: 'score.mjs' });
    const error = scoreError(() => task.score('throw', null, 'x', {}));
    const located = locateScorerError(error, 'ticket-017') as InputError;
    expect(located.exampleId).toBe('ticket-017');
    expect(located.code).toBe(CUSTOM_SCORER_ERROR);
    expect(located.message).toMatch(
      new RegExp(
        `^${join(folder, 'score.mjs').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: example ticket-017: score\\(\\) threw`,
      ),
    );
    const other = new Error('not ours');
    expect(locateScorerError(other, 'ticket-017')).toBe(other);
  });
});

describe('feedback when the scorer gives no reason', () => {
  it('says the score, so a proposer reads something, and stays empty for a full score', async () => {
    const folder = study({ 'score.mjs': 'export const score = (output) => output;\n' });
    const task = await loadCustomTask({ studyFolder: folder, module: 'score.mjs' });
    expect(task.score(0.25, null, 'x', defaultWeights(task)).feedback).toBe('scored 0.25; the scorer gave no reason');
    expect(task.score(2 / 3, null, 'x', defaultWeights(task)).feedback).toBe('scored 0.667; the scorer gave no reason');
    expect(task.score(1, null, 'x', defaultWeights(task)).feedback).toBe('');
    // No weighted component scored: no score at all (the evaluator leaves the example out), so nothing is invented (peer fault 3 of issue #36).
    expect(task.score(0, null, 'x', { score: 0 }).feedback).toBe('');
  });
});
