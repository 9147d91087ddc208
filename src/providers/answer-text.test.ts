import { describe, expect, it } from 'vitest';
import { parseJsonAnswer, stripReasoning } from './answer-text.ts';

describe('parseJsonAnswer', () => {
  it('reads bare JSON, fenced JSON, JSON after prose and after a reasoning block', () => {
    expect(parseJsonAnswer('{"a":1}')).toMatchObject({ ok: true, value: { a: 1 } });
    expect(parseJsonAnswer('```json\n{"a": 2}\n```')).toMatchObject({ ok: true, value: { a: 2 } });
    expect(parseJsonAnswer('Here it is:\n{"a": 3}\nHope this helps.')).toMatchObject({ ok: true, value: { a: 3 } });
    expect(parseJsonAnswer('<think>maybe {"a": 0}</think>{"a": 4}')).toMatchObject({ ok: true, value: { a: 4 } });
  });

  it('names each problem', () => {
    expect(parseJsonAnswer('  ')).toMatchObject({ ok: false, problem: 'empty' });
    expect(parseJsonAnswer('<think>still thinking')).toMatchObject({ ok: false, problem: 'unclosed-think' });
    expect(parseJsonAnswer('<think>done</think>')).toMatchObject({ ok: false, problem: 'empty' });
    expect(parseJsonAnswer('```json\n{"a": 1')).toMatchObject({ ok: false, problem: 'unclosed-fence' });
    expect(parseJsonAnswer('{"a": 1,,}')).toMatchObject({ ok: false, problem: 'unparsable' });
    expect(parseJsonAnswer('no json at all')).toMatchObject({ ok: false, problem: 'unparsable' });
  });
});

describe('stripReasoning', () => {
  it('removes complete blocks and keeps what follows a stray closing tag', () => {
    expect(stripReasoning('<thinking>x</thinking>answer')).toBe('answer');
    expect(stripReasoning('reasoning leaked</think>answer')).toBe('answer');
    expect(stripReasoning('<think>open')).toBeNull();
  });
});
