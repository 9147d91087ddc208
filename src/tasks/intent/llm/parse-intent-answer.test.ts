import { describe, expect, it } from 'vitest';
import { MAX_RAW_CHARACTERS, parseIntentAnswer } from './parse-intent-answer.ts';

const VALID = {
  appType: 'booking',
  entities: [{ name: 'Patient', role: 'party' }],
  relations: [],
  behaviors: ['scheduling'],
  projections: [],
};

describe('parseIntentAnswer', () => {
  it('accepts an answer in the public intent format, bare or fenced', () => {
    expect(parseIntentAnswer(JSON.stringify(VALID), 'stop')).toMatchObject({ ok: true, intent: VALID });
    expect(parseIntentAnswer(`<think>ok</think>\n\`\`\`json\n${JSON.stringify(VALID)}\n\`\`\``, 'stop').ok).toBe(true);
  });

  it('names every kind of invalid answer and keeps the raw text', () => {
    expect(parseIntentAnswer('{"appType":"boo', 'length')).toMatchObject({
      ok: false,
      reason: 'truncated',
      raw: '{"appType":"boo',
    });
    expect(parseIntentAnswer('', 'stop')).toMatchObject({ ok: false, reason: 'empty' });
    expect(parseIntentAnswer('', 'length')).toMatchObject({ ok: false, reason: 'truncated' });
    expect(parseIntentAnswer('I refuse', 'content-filter')).toMatchObject({ ok: false, reason: 'refused' });
    expect(parseIntentAnswer('a booking app', 'stop')).toMatchObject({ ok: false, reason: 'unparsable' });
    expect(parseIntentAnswer('<think>hmm', 'stop')).toMatchObject({ ok: false, reason: 'unparsable' });
    const offSchema = parseIntentAnswer(JSON.stringify({ ...VALID, appType: 'spaceship', extra: 1 }), 'stop');
    expect(offSchema).toMatchObject({ ok: false, reason: 'schema' });
    expect(!offSchema.ok && offSchema.message).toMatch(/appType/);
    expect(parseIntentAnswer(JSON.stringify({ appType: 'booking' }), 'stop')).toMatchObject({
      ok: false,
      reason: 'schema',
    });
  });

  it('caps the raw text it keeps', () => {
    const long = 'x'.repeat(MAX_RAW_CHARACTERS * 2);
    const result = parseIntentAnswer(long, 'stop');
    expect(result.raw.length).toBeLessThan(MAX_RAW_CHARACTERS + 50);
  });
});
