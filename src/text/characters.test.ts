import { describe, expect, it } from 'vitest';
import { capWithCount, characterCount, truncateText, truncateTextStart } from './characters.ts';

/** True when the text holds a UTF-16 surrogate without its other half (not valid Unicode). */
const hasLoneSurrogate = (text: string): boolean => /[\uD800-\uDFFF]/u.test(text);

describe('characterCount', () => {
  it('counts code points, not UTF-16 units', () => {
    expect(characterCount('')).toBe(0);
    expect(characterCount('abc')).toBe(3);
    expect(characterCount('😀')).toBe(1);
    expect('😀'.length).toBe(2);
    expect(characterCount('ab😀c')).toBe(4);
    // woman, zero-width joiner, laptop: three code points, one grapheme
    expect(characterCount('👩‍💻')).toBe(3);
    // a lone surrogate counts as one
    expect(characterCount('a\uD83D')).toBe(2);
  });
});

describe('truncateText', () => {
  it('leaves a text that fits unchanged', () => {
    expect(truncateText('😀'.repeat(5), 5)).toBe('😀'.repeat(5));
    expect(truncateText('abc', 3)).toBe('abc');
  });

  it('cuts an emoji text on whole characters, marker included in the count', () => {
    const goal = '😀'.repeat(300);
    const cut = truncateText(goal, 240);
    expect(cut).toBe(`${'😀'.repeat(239)}…`);
    expect(characterCount(cut)).toBe(240);
    expect(hasLoneSurrogate(cut)).toBe(false);
    // the cut a UTF-16 slice makes: a lone surrogate
    expect(hasLoneSurrogate(goal.slice(0, 239))).toBe(true);
  });

  it('never splits a grapheme cluster (emoji sequences, combining accents, flags)', () => {
    expect(truncateText('ab👩‍💻cd', 5)).toBe('ab…');
    expect(truncateText('ab👩‍💻cd', 6)).toBe('ab👩‍💻…');
    expect(truncateText('cafe\u0301 noir', 5)).toBe('caf…');
    expect(truncateText('🇫🇷🇩🇪🇮🇹', 4)).toBe('🇫🇷…');
  });

  it('takes another marker, or none', () => {
    expect(truncateText('😀😀😀😀', 3, '')).toBe('😀😀😀');
    expect(truncateText('abcdef', 5, '...')).toBe('ab...');
    expect(truncateText('abcdef', 0)).toBe('');
  });
});

describe('truncateTextStart', () => {
  it('keeps the end on whole characters', () => {
    expect(truncateTextStart('😀'.repeat(10), 4)).toBe(`…${'😀'.repeat(3)}`);
    expect(truncateTextStart('abc', 3)).toBe('abc');
    expect(hasLoneSurrogate(truncateTextStart(`x${'😀'.repeat(50)}`, 8))).toBe(false);
  });
});

describe('capWithCount', () => {
  it('keeps the first characters and counts the rest in characters', () => {
    expect(capWithCount('😀'.repeat(5), 3)).toBe('😀😀😀… [2 more characters]');
    expect(capWithCount('short', 10)).toBe('short');
    expect(capWithCount('x'.repeat(4005), 4000)).toBe(`${'x'.repeat(4000)}… [5 more characters]`);
  });
});
