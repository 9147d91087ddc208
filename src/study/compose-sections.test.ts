/**
 * The artifact's sections by executor (composeSectionsOf): a command
 * executor's artifact is split by its format, and a plain text is one
 * section, never read as YAML.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planStudy, writeStudy } from '../init/init-study.ts';
import { composeSectionsOf } from './compose.ts';
import type { StudyConfig } from '../config/config.ts';
import { loadStudyAsync } from './load-study.ts';

const command = (artifact: string) =>
  composeSectionsOf({ executor: { kind: 'command' } as StudyConfig['executor'], artifact });
const NOTES = 'Route by what must be done.\nNote: refunds of returned items go to returns.\nrules: none here\n';

describe('the sections of a command artifact', () => {
  it('a plain text (.txt, a script, no extension) is one section: the whole text, even with lines that look like YAML keys', () => {
    for (const name of ['notes.txt', 'route.py', 'RULES'])
      expect(command(`/study/${name}`)(NOTES), name).toEqual({ '(preamble)': NOTES });
  });

  it('YAML and JSON: their top-level keys; markdown: its ## sections', () => {
    const yaml = '# header\ndefault: technical\nrules:\n  - queue: billing\n    any: [refund]\n';
    expect(command('/study/rules.yaml')(yaml)).toEqual({
      '(preamble)': '# header',
      default: 'default: technical',
      rules: 'rules:\n  - queue: billing\n    any: [refund]\n',
    });
    expect(command('/study/rules.YML')(yaml)).toEqual(command('/study/rules.yaml')(yaml));
    expect(command('/study/rules.json')('{"default":"technical","rules":[{"queue":"billing"}]}')).toEqual({
      default: '"technical"',
      rules: '[{"queue":"billing"}]',
    });
    expect(command('/study/prompt.md')('# Prompt\n\n## Queues\nbilling\n')).toEqual({
      '(preamble)': '# Prompt\n\n',
      Queues: '## Queues\nbilling\n',
    });
  });

  it('a command study whose text artifact names a "section" in editableSections is refused at load, listing its one section', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-sections-'));
    try {
      writeStudy(dir, planStudy({ task: 'classification', executor: 'command' }).files, { force: true });
      writeFileSync(path.join(dir, 'notes.txt'), NOTES);
      writeFileSync(
        path.join(dir, 'kloop.yaml'),
        readFileSync(path.join(dir, 'kloop.yaml'), 'utf8').replace(/^artifact: rules\.json/m, 'artifact: notes.txt'),
      );
      const program = readFileSync(path.join(dir, 'program.md'), 'utf8');
      const constraints = (editable: string): string =>
        program.replace(
          `requiredText: ['"default"', '"rules"']`,
          `requiredText: ["Route by"]\neditableSections: ${editable}`,
        );
      expect(constraints('x')).not.toBe(program);
      writeFileSync(path.join(dir, 'program.md'), constraints('[Note]'));
      await expect(loadStudyAsync(dir)).rejects.toThrow(
        '"Note" is no section of the artifact notes.txt (its sections: (preamble))',
      );
      writeFileSync(path.join(dir, 'program.md'), constraints('["(preamble)"]'));
      const study = await loadStudyAsync(dir);
      expect(study.constraints.check(NOTES, `${NOTES}Another line.\n`).passed).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
