import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kloop } from '../../tests/cli-in-process.ts';
import { InputError } from '../errors.ts';
import { planStudy, writeStudy } from '../init/init-study.ts';
import { ERROR_DRIVEN_PROPOSER_ID as proposerModuleId } from '../proposers/error-driven-proposer.ts';
import { OFFLINE_EXECUTOR_ID as executorModuleId } from '../tasks/intent/offline/offline-executor.ts';
import {
  createLazyErrorDrivenProposer,
  createLazyOfflineExecutor,
  ERROR_DRIVEN_PROPOSER_ID,
  loadStudyAsync,
  OFFLINE_EXECUTOR_ID,
} from './load-study.ts';

describe('the offline executor and error-driven proposer, loaded on first use', () => {
  it('declare the ids their modules declare (part of the evaluator fingerprint)', () => {
    expect(OFFLINE_EXECUTOR_ID).toBe(executorModuleId);
    expect(ERROR_DRIVEN_PROPOSER_ID).toBe(proposerModuleId);
    expect(createLazyOfflineExecutor().id).toBe(executorModuleId);
    expect(createLazyErrorDrivenProposer().id).toBe(proposerModuleId);
  });

  it('execute like the offline executor once loaded', async () => {
    const executor = createLazyOfflineExecutor();
    const result = await executor.execute({
      input: 'Patients book appointments with therapists.',
      text: 'Patients book appointments with therapists.',
      artifact: 'not: [a playbook',
      repeat: 0,
    });
    expect(result.ok).toBe(false);
    expect(executor.deterministic).toBe(true);
  });
});

describe('a prompt template is checked when the study loads, not at the first model call', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  /** A classification study on the llm executor (kloop init), its prompt's line 3 replaced by `line`. */
  function llmStudy(line: string): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-template-'));
    dirs.push(dir);
    writeStudy(dir, planStudy({ task: 'classification', executor: 'llm' }).files, { force: true });
    const prompt = readFileSync(path.join(dir, 'prompt.md'), 'utf8').split('\n');
    prompt[2] = line;
    writeFileSync(path.join(dir, 'prompt.md'), prompt.join('\n'));
    return dir;
  }
  const failure = async (dir: string): Promise<InputError> => {
    const error = await loadStudyAsync(dir).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  };

  it('a malformed placeholder: the file, the line and the placeholder', async () => {
    const dir = llmStudy('You route {{#if vip}} tickets.');
    const error = await failure(dir);
    expect(error).toMatchObject({ file: path.join(dir, 'prompt.md'), line: 3, code: 'input.artifact' });
    expect(error.message).toBe(
      `${path.join(dir, 'prompt.md')}:3: "{{#if vip}}" is not a placeholder: write {{input}} (the input's text), {{input.<field>}} or {{<field>}} (a field of an object input)`,
    );
  });

  it('a placeholder the corpus cannot fill: the file, the line, the placeholder and the first example that lacks it', async () => {
    const error = await failure(llmStudy('Ticket subject: {{subject}}'));
    expect(error.line).toBe(3);
    expect(error.detail).toBe(
      'the prompt names {{subject}}, but example "ticket-0001"\'s input is a text, not an object with fields; write {{input}} for its text',
    );
  });

  it('a template every example fills loads (then needs its model, as before)', async () => {
    const error = await failure(llmStudy('Ticket: {{input}}'));
    expect(error.detail).toBe('executor kind "llm" needs a model provider');
  });

  it('kloop run refuses it with exit 2 before opening a model client', async () => {
    const dir = llmStudy('{{ input.a.b }}');
    const result = await kloop('run', dir, '--json');
    expect(result.code).toBe(2);
    expect((JSON.parse(result.stdout) as { error: Record<string, unknown> }).error).toMatchObject({
      code: 'input.artifact',
      file: path.join(dir, 'prompt.md'),
      line: 3,
    });
  });
});
