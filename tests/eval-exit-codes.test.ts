/**
 * `kloop eval` exit codes (docs/reliability.md, "Exit codes"): 1 when
 * nothing valid came back (every output invalid: there is no composite), 0
 * when anything valid did, 2 when there is nothing to evaluate (an empty
 * `--corpus` file). In-process, against a scripted model server on 127.0.0.1.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kloop } from './cli-in-process.ts';
import type { FakeServer } from './llm-fake-openai-server.ts';
import type { LlmStopStudy } from './llm-stop-study.ts';
import { makeLlmStopStudy, modelArgs, serveStudy } from './llm-stop-study.ts';
import { makeSmallStudy } from './small-intent-study.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const NONSENSE = { content: 'I think this is a lovely app! {"appType": ' };

/** A 20-example LLM study whose server answers nonsense to every goal but those of its first `valid` examples (the gold). */
async function twentyExamples(valid: number): Promise<{ study: LlmStopStudy; server: FakeServer }> {
  const study = makeLlmStopStudy({ optimization: 12, anchor: 3, shadow: 5 });
  cleanups.push(study.cleanup);
  const answered = new Set(study.examples.slice(0, valid).map((example) => example.goal));
  const server = await serveStudy(study, {
    proposer: () => NONSENSE,
    executor: (chat) => (answered.has(chat.user) ? undefined : NONSENSE),
  });
  cleanups.push(() => server.close());
  return { study, server };
}

describe('kloop eval when nothing valid came back', () => {
  it('20 of 20 outputs invalid: exit 1, the report still printed (JSON and text), the reason on stderr', async () => {
    const { study, server } = await twentyExamples(0);
    const json = await kloop('eval', study.dir, '--json', ...modelArgs(server));
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ composite: null, invalid: 20, total: 20 });
    expect(json.stderr).toContain(
      'kloop: nothing valid came back: 20 of 20 outputs are invalid (unparsable 20); there is no composite (exit 1)',
    );

    const text = await kloop('eval', study.dir, '--quiet', '--no-cache', ...modelArgs(server));
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^all\s+20\s+—/m);
    expect(text.stderr).toContain('nothing valid came back: 20 of 20');
  }, 60_000);

  it('19 of 20 invalid is a score (of one example): exit 0', async () => {
    const { study, server } = await twentyExamples(1);
    const json = await kloop('eval', study.dir, '--json', ...modelArgs(server));
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ composite: 1, invalid: 19, total: 20 });
  }, 60_000);
});

describe('kloop eval with nothing to evaluate', () => {
  it('--corpus empty.jsonl: exit 2, naming the file', async () => {
    const small = makeSmallStudy({ optimization: 6, anchor: 2, shadow: 5, config: [] });
    cleanups.push(small.cleanup);
    const empty = path.join(small.dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const text = await kloop('eval', small.dir, '--corpus', empty);
    expect(text.code).toBe(2);
    expect(text.stderr).toBe(`kloop: ${empty}: --corpus: the file holds no examples: nothing to evaluate\n`);
    const json = await kloop('eval', small.dir, '--corpus', empty, '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: 'input',
        message: 'the file holds no examples: nothing to evaluate',
        file: empty,
        field: '--corpus',
      },
    });
  });
});
