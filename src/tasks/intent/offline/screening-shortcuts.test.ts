/**
 * The two shortcuts the error-driven proposer's local screening takes must
 * not change what it finds:
 *
 * - an edit's playbook shares its unedited sections with its source, frozen
 *   (playbook-edit.ts): `extractIntent` gives such playbooks the entity
 *   reading of a goal it made for an earlier one with the same entity
 *   sections;
 * - `editMayAffect` skips an example for a role-suffix edit when no lemma of
 *   it (nor the canonical name of an alias) ends with the suffix.
 *
 * Both are checked against extraction with a playbook parsed afresh from the
 * edited text, on every goal of the reference corpus.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readIntentCorpus } from '../../../test-support/intent-examples.ts';
import { scoreIntent } from '../scorer.ts';
import type { ExampleEvidence } from './edit-candidates.ts';
import { editMayAffect, generateEditCandidates } from './edit-candidates.ts';
import { compilePlaybook, extractIntent } from './extract.ts';
import type { GoalAnalysis } from './goal-analysis.ts';
import { analyzeGoal } from './goal-analysis.ts';
import type { Playbook } from './playbook.ts';
import { parsePlaybook } from './playbook.ts';
import type { PlaybookEdit } from './playbook-edit.ts';
import { describePlaybookEdit, editPlaybook } from './playbook-edit.ts';

const EXAMPLES_DIR = path.resolve(import.meta.dirname, '../../../../examples/intent');
const SEED = readFileSync(path.join(EXAMPLES_DIR, 'playbook.yaml'), 'utf8');
const CORPUS = readdirSync(path.join(EXAMPLES_DIR, 'corpus')).flatMap((file) =>
  readIntentCorpus(path.join(EXAMPLES_DIR, 'corpus', file)),
);

function parsed(text: string): Playbook {
  const result = parsePlaybook(text);
  if (!result.ok) throw new Error(result.errors[0]?.message);
  return result.playbook;
}

/** The extraction with a playbook parsed afresh from `text`: no section is shared with anything. */
function fresh(text: string, analysis: GoalAnalysis): ReturnType<typeof extractIntent> {
  return extractIntent(compilePlaybook(parsed(text)), analysis);
}

describe('the entity reading shared between the edits of one source', () => {
  const seed = parsed(SEED);
  const compiledSeed = compilePlaybook(seed);
  const evidence: ExampleEvidence[] = CORPUS.map((example) => {
    const analysis = analyzeGoal(example.input);
    const { intent, trace } = extractIntent(compiledSeed, analysis);
    const diagnostics = scoreIntent(example.expected, intent).diagnostics;
    return {
      id: example.id,
      expected: example.expected,
      analysis,
      trace,
      predictedAppType: intent.appType,
      predictedEntityCount: intent.entities.length,
      diagnostics,
    };
  });

  it('gives every goal what a fresh parse of each edited text gives, for the edits screening proposes in every section', () => {
    const candidates = generateEditCandidates(seed, evidence, { precision: true, relations: true });
    const bySection = new Map<string, PlaybookEdit[]>();
    for (const { edit } of candidates) {
      const list = bySection.get(edit.path[0]) ?? [];
      if (list.length < 4) list.push(edit);
      bySection.set(edit.path[0], list);
    }
    // Cue sections (reused reading) and entity sections (read afresh) are both among the edits.
    expect([...bySection.keys()]).toEqual(
      expect.arrayContaining(['behaviorCues', 'appTypeCues', 'entityTerms', 'stopList', 'attributeTerms']),
    );
    let compared = 0;
    for (const edit of [...bySection.values()].flat()) {
      const edited = editPlaybook(SEED, edit);
      if (edited === null) continue;
      const compiled = compilePlaybook(edited.playbook);
      const own = compilePlaybook(parsed(edited.text));
      for (const { analysis } of evidence) {
        expect(extractIntent(compiled, analysis), describePlaybookEdit(edit)).toEqual(extractIntent(own, analysis));
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(10 * CORPUS.length);
  });

  it('is read once per goal for edits outside the entity sections, and afresh for an edit inside them', () => {
    const behavior = editPlaybook(SEED, { op: 'add', path: ['behaviorCues', 'notification'], value: 'ping' })!;
    const appType = editPlaybook(SEED, { op: 'add', path: ['appTypeCues', 'booking'], value: 'court' })!;
    const stop = editPlaybook(SEED, { op: 'add', path: ['stopList'], value: 'member' })!;
    const analysis = analyzeGoal(CORPUS[0]!.input);
    const first = extractIntent(compilePlaybook(behavior.playbook), analysis).intent;
    const second = extractIntent(compilePlaybook(appType.playbook), analysis).intent;
    expect(second.entities).toBe(first.entities);
    expect(second.relations).toBe(first.relations);
    // Shared, so frozen: no caller can change what another reads.
    expect(Object.isFrozen(first.entities[0])).toBe(true);
    const other = extractIntent(compilePlaybook(stop.playbook), analysis).intent;
    expect(other.entities).not.toBe(first.entities);
    // A playbook parsed on its own shares nothing and is read afresh every time.
    const own = compilePlaybook(parsed(behavior.text));
    expect(extractIntent(own, analysis).intent.entities).not.toBe(extractIntent(own, analysis).intent.entities);
  });
});

describe('editMayAffect for a role suffix', () => {
  it('is false only where the edited text extracts what the source does, and false for some goals', () => {
    const seed = parsed(SEED);
    const compiledSeed = compilePlaybook(seed);
    const suffixes = ['ist', 'ager', 'ver', 'ber', 'ant', 'ent', 'ion', 'ure', 'zzq'];
    let skipped = 0;
    let changed = 0;
    for (const suffix of suffixes) {
      for (const role of ['party', 'actor', 'resource'] as const) {
        const edit: PlaybookEdit = { op: 'set', path: ['roleSuffixes', suffix], value: role };
        const edited = editPlaybook(SEED, edit);
        if (edited === null) continue;
        const compiled = compilePlaybook(parsed(edited.text));
        for (const example of CORPUS) {
          const analysis = analyzeGoal(example.input);
          const before = JSON.stringify(extractIntent(compiledSeed, analysis).intent);
          const after = JSON.stringify(extractIntent(compiled, analysis).intent);
          const evidence = { analysis } as ExampleEvidence;
          if (!editMayAffect(edit, seed, evidence)) {
            expect(after, `${describePlaybookEdit(edit)} on ${example.id}`).toBe(before);
            skipped += 1;
          } else if (after !== before) {
            changed += 1;
          }
        }
      }
    }
    expect(skipped).toBeGreaterThan(CORPUS.length);
    expect(changed).toBeGreaterThan(0);
  });

  it('counts the canonical name of an alias, which need not occur in the text', () => {
    const text = 'entityAliases:\n  shopper: Store Manager\nunknownNounPolicy: {include: true, role: resource}\n';
    const edit: PlaybookEdit = { op: 'set', path: ['roleSuffixes', 'ager'], value: 'party' };
    const analysis = analyzeGoal('Shoppers buy goods.');
    expect(analysis.words.some((word) => word.lemma.endsWith('ager'))).toBe(false);
    expect(editMayAffect(edit, parsed(text), { analysis } as ExampleEvidence)).toBe(true);
    const before = fresh(text, analysis).intent.entities.find((entity) => entity.name === 'StoreManager');
    const after = fresh(editPlaybook(text, edit)!.text, analysis).intent.entities.find(
      (entity) => entity.name === 'StoreManager',
    );
    expect(before?.role).toBe('resource');
    expect(after?.role).toBe('party');
  });
});
