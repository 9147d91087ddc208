import { describe, expect, it } from 'vitest';
import {
  createAudienceWorld,
  DAY_MS,
  delayWithin,
  HOUR_MS,
  SIMULATED_AUDIENCE,
  unitsOnDay,
  weekdayRateFactor,
} from './audience-world.ts';
import { effectMultipliers, hintLinesIn, listHintLines } from './hint-lines.ts';

const MONDAY = Date.UTC(2026, 0, 5, 9); // 5 January 2026, 09:00 UTC, a Monday
const text = (...ids: string[]): string =>
  ['# Sequence strategy', ...ids.map((id) => `- ${listHintLines().find((hint) => hint.id === id)!.text}`)].join('\n');

describe('hint lines (simulated)', () => {
  it('lists every kind with its true effect and finds the lines a variant contains', () => {
    expect(listHintLines().map((hint) => [hint.id, hint.kind, hint.replyLift, hint.unsubscribeLift])).toEqual([
      ['good-10', 'good', 0.1, 0],
      ['good-20', 'good', 0.2, 0],
      ['good-30', 'good', 0.3, 0],
      ['neutral-signoff', 'neutral', 0, 0],
      ['neutral-case', 'neutral', 0, 0],
      ['harmful-daily', 'harmful', 0.1, 1.5],
      ['harmful-urgency', 'harmful', 0.15, 1],
      ['novelty-news', 'novelty', 0.4, 0],
    ]);
    expect(
      hintLinesIn(`${text('good-20', 'harmful-urgency')}\n  KEEP the first email   under 80 words.  `).map(
        (hint) => hint.id,
      ),
    ).toEqual(['good-20', 'harmful-urgency']);
    expect(hintLinesIn('Keep the first email under 80 words, always.')).toEqual([]);
  });

  it('multiplies the lifts and fades a novelty line linearly over its week', () => {
    const hints = hintLinesIn(text('good-20', 'novelty-news', 'harmful-daily'));
    expect(effectMultipliers(hints, 0).reply).toBeCloseTo(1.2 * 1.4 * 1.1, 12);
    expect(effectMultipliers(hints, 0).unsubscribe).toBe(2.5);
    expect(effectMultipliers(hintLinesIn(text('novelty-news')), 3.5).reply).toBeCloseTo(1.2, 12);
    expect(effectMultipliers(hintLinesIn(text('novelty-news')), 7).reply).toBe(1);
    expect(effectMultipliers(hintLinesIn(text('novelty-news')), 30).reply).toBe(1);
  });
});

describe('createAudienceWorld (simulated)', () => {
  it('gives each unit the same outcomes every time, after its exposure', () => {
    const world = createAudienceWorld({ seed: 7 });
    const again = createAudienceWorld({ seed: 7 });
    for (let unit = 0; unit < 200; unit += 1) {
      const outcomes = world.outcomesFor(`r-${unit}`, text('good-30'), MONDAY);
      expect(again.outcomesFor(`r-${unit}`, text('good-30'), MONDAY)).toEqual(outcomes);
      for (const outcome of outcomes) expect(outcome.at).toBeGreaterThan(MONDAY);
    }
  });

  it('replies at the base rate × weekday × lift, 94% of them within 72 h (seeded counts)', () => {
    const world = createAudienceWorld({ seed: 33 });
    let replies = 0;
    let within = 0;
    let unsubscribes = 0;
    for (let unit = 0; unit < 40_000; unit += 1) {
      for (const outcome of world.outcomesFor(`r-${unit}`, text('good-20', 'neutral-case'), MONDAY)) {
        if (outcome.metric === 'unsubscribe_rate') unsubscribes += 1;
        else {
          replies += 1;
          if (outcome.at - MONDAY <= 72 * HOUR_MS) within += 1;
        }
      }
    }
    // Truth: 40 000 × 0.05 × 1.1 (Monday) × 1.2 = 2640 replies (SD ≈ 50); 40 000 × 0.005 × 1.1 = 220 unsubscribes.
    expect({ replies, within, unsubscribes }).toEqual({ replies: 2645, within: 2478, unsubscribes: 219 });
    expect(world.probabilities(text('good-20'), MONDAY, MONDAY)).toEqual({
      reply: 0.05 * 1.1 * 1.2,
      unsubscribe: 0.005 * 1.1,
    });
    expect(delayWithin(SIMULATED_AUDIENCE.replyDelay, 72 * HOUR_MS)).toBeCloseTo(16 / 17, 12);
  });

  it('remembers a variant’s first exposure: its novelty has faded a week later', () => {
    const world = createAudienceWorld({ seed: 1 });
    world.outcomesFor('first', text('novelty-news'), MONDAY);
    expect(world.probabilities(text('novelty-news'), MONDAY + DAY_MS, MONDAY).reply).toBeCloseTo(
      0.05 * 1.15 * (1 + 0.4 * (6 / 7)),
      12,
    );
    const late = MONDAY + 7 * DAY_MS;
    const base = createAudienceWorld({ seed: 1 });
    for (let unit = 0; unit < 500; unit += 1) {
      expect(world.outcomesFor(`u-${unit}`, text('novelty-news'), late)).toEqual(
        base.outcomesFor(`u-${unit}`, '# no hint', late),
      );
    }
  });

  it('has weekday seasonality and traffic, and refuses bad settings', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((day) => weekdayRateFactor(MONDAY + (day - 1) * DAY_MS))).toEqual([
      ...SIMULATED_AUDIENCE.weekdayRate,
    ]);
    expect(unitsOnDay(MONDAY, 1000)).toBe(1200);
    expect(unitsOnDay(MONDAY + 5 * DAY_MS, 1000)).toBe(600);
    expect(() => createAudienceWorld({ seed: 1.5 })).toThrow(/seed/);
    expect(() => createAudienceWorld({ seed: 1, baseReplyRate: 2 })).toThrow(/baseReplyRate/);
  });
});
