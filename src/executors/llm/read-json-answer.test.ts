import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_RAW_CHARACTERS } from '../cap-raw.ts';
import { readJsonAnswer } from './read-json-answer.ts';

const OUTPUT = z.object({ label: z.enum(['billing', 'technical']) });
const read = (text: string, finishReason = 'stop') => readJsonAnswer(text, finishReason, OUTPUT, 'output');

describe('readJsonAnswer', () => {
  it('reads bare, fenced, after a think block, and with prose around one object; strips unknown keys', () => {
    expect(read('{"label":"billing"}')).toEqual({ ok: true, output: { label: 'billing' }, raw: '{"label":"billing"}' });
    expect(read('```json\n{"label": "technical"}\n```')).toMatchObject({ ok: true, output: { label: 'technical' } });
    expect(read('<think>a charge, so billing</think>\n{"label":"billing"}')).toMatchObject({
      ok: true,
      output: { label: 'billing' },
    });
    expect(read('Sure! {"label":"billing","why":"charged"} Hope this helps.')).toEqual({
      ok: true,
      output: { label: 'billing' },
      raw: 'Sure! {"label":"billing","why":"charged"} Hope this helps.',
    });
  });

  it('reads a non-object output when it is the whole answer or fenced', () => {
    const list = z.array(z.string());
    expect(readJsonAnswer('["a","b"]', 'stop', list, 'output')).toMatchObject({ ok: true, output: ['a', 'b'] });
    expect(readJsonAnswer('```\n["a"]\n```', 'stop', list, 'output')).toMatchObject({ ok: true, output: ['a'] });
  });

  it('names every kind of invalid answer and keeps the raw text', () => {
    expect(read('{"label":"bil', 'length')).toEqual({
      ok: false,
      reason: 'truncated',
      message: 'the answer was cut off at the output token limit (finish reason length)',
      raw: '{"label":"bil',
    });
    expect(read('I cannot', 'content-filter')).toMatchObject({ ok: false, reason: 'refused' });
    expect(read('  \n')).toMatchObject({ ok: false, reason: 'empty', message: 'the answer is empty' });
    expect(read('<think>only thinking</think>')).toMatchObject({ ok: false, reason: 'empty' });
    expect(read('<think>never closed')).toMatchObject({ ok: false, reason: 'unparsable' });
    expect(read('billing')).toMatchObject({ ok: false, reason: 'unparsable', raw: 'billing' });
    expect(read('{"label":"sales"}')).toEqual({
      ok: false,
      reason: 'schema',
      message:
        'the answer does not fit the output schema: label: Invalid option: expected one of "billing"|"technical"',
      raw: '{"label":"sales"}',
    });
    expect(readJsonAnswer('{}', 'stop', OUTPUT, 'ticket')).toMatchObject({
      ok: false,
      reason: 'schema',
      message: expect.stringMatching(/^the answer does not fit the ticket schema: label: /),
    });
  });

  it('caps the raw text it keeps', () => {
    const result = read('x'.repeat(MAX_RAW_CHARACTERS * 2));
    expect(result.raw.length).toBeLessThan(MAX_RAW_CHARACTERS + 50);
  });
});
