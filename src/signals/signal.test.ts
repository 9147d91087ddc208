import { describe, expect, it } from 'vitest';
import { parseSignalBody, parseSignalLines } from './parse-signals.ts';
import { formatSignalIssue, fromSignalRow, parseSignal, toSignalRow } from './signal.ts';

const valid = {
  id: 'sig-1',
  time: '2025-03-04T10:15:00+01:00',
  assemblyMethod: 'decomposed',
  confidence: 0.62,
  appClass: 'booking',
  hasCommitments: true,
  entityCount: 5,
  artifactVersion: 'abc123',
  goal: 'a kennel where owners book stays for their pets',
  uncoveredEntities: ['Pet'],
  uncoveredBehaviors: ['rating'],
  patterns: ['booking'],
};

describe('the signal schema', () => {
  it('accepts a complete signal and the minimal one', () => {
    expect(parseSignal(valid).success).toBe(true);
    const {
      goal: _goal,
      uncoveredEntities: _entities,
      uncoveredBehaviors: _behaviors,
      patterns: _patterns,
      ...minimal
    } = valid;
    expect(parseSignal(minimal).success).toBe(true);
  });

  it('names the field of every problem: missing, out of range, unknown, wrong vocabulary', () => {
    const { confidence: _confidence, ...missing } = valid;
    const result = parseSignal(
      { ...missing, confidance: 0.5, entityCount: 2.5, uncoveredBehaviors: ['flying'], time: 'yesterday' },
      { line: 7 },
    );
    expect(result.success).toBe(false);
    if (result.success) return;
    const fields = result.issues.map((issue) => issue.field);
    expect(fields).toEqual(
      expect.arrayContaining(['confidence', 'confidance', 'entityCount', 'uncoveredBehaviors[0]', 'time']),
    );
    expect(result.issues.find((issue) => issue.field === 'confidence')?.message).toBe('required field is missing');
    expect(result.issues.find((issue) => issue.field === 'confidance')?.message).toBe('unknown field "confidance"');
    expect(formatSignalIssue(result.issues[0]!)).toMatch(/^line 7: /);
  });

  it('refuses confidence outside [0, 1] and a method outside the list', () => {
    expect(parseSignal({ ...valid, confidence: 1.2 }).success).toBe(false);
    expect(parseSignal({ ...valid, confidence: -0.1 }).success).toBe(false);
    expect(parseSignal({ ...valid, assemblyMethod: 'guessed' }).success).toBe(false);
    expect(parseSignal([valid]).success).toBe(false);
  });

  it('stores time in UTC, drops the goal when goals are off, and reads back', () => {
    const parsed = parseSignal(valid);
    if (!parsed.success) throw new Error('expected valid');
    const row = toSignalRow(parsed.signal, {
      source: 'ingest',
      receivedAt: '2025-03-05T00:00:00.000Z',
      storeGoals: false,
    });
    expect(row.time).toBe('2025-03-04T09:15:00.000Z');
    expect(row.goal).toBeNull();
    const stored = fromSignalRow(row);
    expect(stored.uncoveredEntities).toEqual(['Pet']);
    expect(stored.roles).toBeUndefined();
    expect(stored.hasCommitments).toBe(true);
  });
});

describe('reading signals from text', () => {
  it('JSON Lines: skips blank lines, reports line numbers, keeps the valid records', () => {
    const text = [JSON.stringify(valid), '', '{"id": 1}', 'not json', JSON.stringify({ ...valid, id: 'sig-2' })].join(
      '\r\n',
    );
    const parsed = parseSignalLines(text);
    expect(parsed.records).toBe(4);
    expect(parsed.signals.map((entry) => entry.line)).toEqual([1, 5]);
    expect(parsed.malformed).toBe(2);
    expect(new Set(parsed.issues.map((issue) => issue.line))).toEqual(new Set([3, 4]));
  });

  it('a body: one object, an array (issues by index), or JSON Lines', () => {
    expect(parseSignalBody(JSON.stringify(valid)).signals).toHaveLength(1);
    const batch = parseSignalBody(JSON.stringify([valid, { ...valid, id: 'x', confidence: 'high' }]));
    expect(batch.malformed).toBe(1);
    expect(batch.issues[0]).toMatchObject({ index: 1, field: 'confidence' });
    expect(
      parseSignalBody(`${JSON.stringify(valid)}\n${JSON.stringify({ ...valid, id: 'b' })}\n`).signals,
    ).toHaveLength(2);
    expect(parseSignalBody('').records).toBe(0);
  });
});
