import { describe, expect, it } from 'vitest';
import { createSeededRandom, predictivePower } from '../../stats/index.ts';
import { assessFutility, type FutilityContext } from './futility.ts';
import { createRace, entryOf, nextBatch, observe, raceEvidence, settle, verdicts } from './race.ts';
import { planRace, raceSeed, slotKey } from './race-plan.ts';
import { runRace } from './run-race.ts';

const CONTEXT: FutilityContext = {
  pairVarianceFloor: 40 * 0.016 ** 2,
  runNoiseSd: 0.016,
  candidateRepeats: 5,
  incumbentRepeats: 20,
  margin: 0.008,
  alpha: 0.05,
  stochastic: true,
};
const SETTINGS = { batchSize: 20, futilityLevel: 0.1 };

describe('planRace', () => {
  it('orders every example once per repeat, repeat-major, seeded, in batches', () => {
    const ids = Array.from({ length: 7 }, (_, index) => `e${index}`);
    const plan = planRace({ exampleIds: [...ids].reverse(), repeats: 3, batchSize: 4, seed: 11 });
    expect(plan.total).toBe(21);
    expect(plan.batches.map((batch) => batch.length)).toEqual([4, 4, 4, 4, 4, 1]);
    const slots = plan.batches.flat();
    for (let repeat = 0; repeat < 3; repeat += 1) {
      const ofRepeat = slots.slice(repeat * 7, repeat * 7 + 7);
      expect(ofRepeat.every((slot) => slot.repeat === repeat)).toBe(true);
      expect(ofRepeat.map((slot) => slot.exampleId).sort()).toEqual(ids);
    }
    // The same seed gives the same plan whatever the input order; another seed another order.
    expect(planRace({ exampleIds: ids, repeats: 3, batchSize: 4, seed: 11 })).toEqual(plan);
    expect(planRace({ exampleIds: ids, repeats: 3, batchSize: 4, seed: 12 }).batches[0]).not.toEqual(plan.batches[0]);
    expect(() => planRace({ exampleIds: ids, repeats: 0, batchSize: 4, seed: 1 })).toThrow(RangeError);
    expect(() => planRace({ exampleIds: ids, repeats: 1, batchSize: 0, seed: 1 })).toThrow(RangeError);
    expect(raceSeed(7, 1)).not.toBe(raceSeed(7, 2));
    expect(raceSeed(7, 1)).toBe(raceSeed(7, 1));
  });
});

describe('assessFutility', () => {
  const zeros = (count: number): number[] =>
    Array.from({ length: count }, (_, index) => (index % 2 === 0 ? 0.05 : -0.05));

  it('stops when the predictive power of the final test is below the level, with the inputs documented', () => {
    const differences = zeros(40).map((value) => value - 0.01);
    const assessment = assessFutility(differences, 160, CONTEXT, SETTINGS);
    // c = max(margin, z·σ·√(1/5 + 1/20), z·s/√N) and v = max(s², n·σ²).
    const z = 1.6448536269514722;
    const s2 = (40 * 0.05 ** 2) / 39;
    expect(assessment.critical).toBeCloseTo(Math.max(0.008, z * 0.016 * Math.sqrt(0.25), z * Math.sqrt(s2 / 200)), 12);
    expect(assessment.variance).toBeCloseTo(Math.max(s2, 40 * 0.016 ** 2), 12);
    expect(assessment.predictivePower).toBeCloseTo(
      predictivePower({
        mean: -0.01,
        variance: assessment.variance,
        observed: 40,
        planned: 200,
        critical: assessment.critical,
      }),
      12,
    );
    expect(assessment.predictivePower).toBeLessThan(0.1);
    expect(assessment.futile).toBe('predictive_power');
  });

  it('continues a candidate ahead of the bar, never stops on the last batch or before two pairs', () => {
    expect(
      assessFutility(
        zeros(40).map((value) => value + 0.03),
        160,
        CONTEXT,
        SETTINGS,
      ).futile,
    ).toBeNull();
    expect(
      assessFutility(
        zeros(200).map((value) => value - 0.05),
        0,
        CONTEXT,
        SETTINGS,
      ).futile,
    ).toBeNull();
    expect(assessFutility([-0.5], 199, CONTEXT, SETTINGS).futile).toBeNull();
  });

  it('stops on the anytime-valid bound alone when the level is 0', () => {
    const harmful = Array.from({ length: 200 }, (_, index) => (index % 2 === 0 ? -0.1 : -0.2));
    const assessment = assessFutility(harmful, 40, CONTEXT, { batchSize: 20, futilityLevel: 0 });
    expect(assessment.boundBelowMargin).toBe(true);
    expect(assessment.futile).toBe('bound');
  });
});

/** A race of candidates whose per-example scores are the incumbent's plus a shift and seeded noise. */
function scoresFor(shift: number, seed: number, ids: readonly string[], repeats: number): Map<string, number> {
  const random = createSeededRandom(seed);
  const scores = new Map<string, number>();
  for (let repeat = 0; repeat < repeats; repeat += 1)
    for (const id of ids)
      scores.set(slotKey({ exampleId: id, repeat }), Math.min(1, Math.max(0, 0.6 + shift + 0.1 * (random() - 0.5))));
  return scores;
}

describe('the race', () => {
  const ids = Array.from({ length: 40 }, (_, index) => `o${String(index).padStart(2, '0')}`);
  const plan = planRace({ exampleIds: ids, repeats: 5, batchSize: 20, seed: 3 });
  const incumbentMeans = new Map(ids.map((id) => [id, 0.6]));

  it('stops a harmful candidate for futility, sets aside one significantly behind the leader, completes the leader', () => {
    const race = createRace({
      plan,
      context: CONTEXT,
      settings: SETTINGS,
      incumbentMeans,
      keys: ['good', 'fair', 'harmful'],
    });
    const truth = {
      good: scoresFor(0.1, 1, ids, 5),
      fair: scoresFor(0.03, 2, ids, 5),
      harmful: scoresFor(-0.1, 3, ids, 5),
    };
    const seen: string[] = [];
    for (;;) {
      const due = nextBatch(race);
      if (due === null) break;
      for (const key of due.keys) {
        const records = plan.batches[due.batch]!.map((slot) => ({
          ...slot,
          valid: true,
          composite: truth[key as keyof typeof truth].get(slotKey(slot))!,
        }));
        observe(race, key, records);
      }
      const step = verdicts(race);
      for (const entry of step.futile) seen.push(`${entry.key} futile after ${entry.next}`);
      for (const entry of step.setAside) seen.push(`${entry.key} set aside behind ${entry.behind}`);
      for (const entry of step.complete) seen.push(`${entry.key} complete`);
    }
    expect(seen[0]).toBe('harmful futile after 1');
    expect(seen).toContain('fair set aside behind good');
    expect(seen.at(-1)).toBe('good complete');
    expect(entryOf(race, 'fair').status).toBe('set_aside');
    expect(entryOf(race, 'fair').behindBecause).toBe('likely_leader');
    // The leader refused: the candidate behind it rejoins where it stood.
    const stoodAt = entryOf(race, 'fair').next;
    settle(race, 'good', 'refused');
    expect(entryOf(race, 'fair').status).toBe('racing');
    expect(nextBatch(race)).toEqual({ batch: stoodAt, keys: ['fair'] });
    const evidence = raceEvidence(race, 'harmful', 'futility');
    expect(evidence).toMatchObject({
      stop: 'futility',
      rule: 'predictive_power',
      batches: 1,
      of: 10,
      batchSize: 20,
      evaluated: 20,
      planned: 200,
      examples: 20,
      repeats: 1,
      pairs: 20,
    });
    expect(evidence.bound.upper).toBeGreaterThan(evidence.delta);
    expect(evidence.bound.lower).toBeLessThan(evidence.delta);
  });

  it('sets aside a candidate significantly behind a leader that is not likely to pass (the anytime-valid bound on their differences)', () => {
    // The final test needs far more than either gain (a noisy study), so neither is likely; futility only on the bound, below −0.5.
    const context: FutilityContext = { ...CONTEXT, runNoiseSd: 0.8, margin: -0.5 };
    const wide = planRace({ exampleIds: ids, repeats: 5, batchSize: 40, seed: 3 });
    const race = createRace({
      plan: wide,
      context,
      settings: { batchSize: 40, futilityLevel: 0 },
      incumbentMeans: new Map(ids.map((id) => [id, 0.5])),
      keys: ['ahead', 'behind'],
    });
    const truth = { ahead: scoresFor(0.3, 6, ids, 5), behind: scoresFor(0, 7, ids, 5) };
    for (const key of ['ahead', 'behind'] as const)
      observe(
        race,
        key,
        wide.batches[0]!.map((slot) => ({ ...slot, valid: true, composite: truth[key].get(slotKey(slot))! })),
      );
    const step = verdicts(race);
    expect(step.futile).toEqual([]);
    expect(entryOf(race, 'ahead').assessment!.predictivePower).toBeLessThan(0.5);
    expect(step.setAside.map((entry) => [entry.key, entry.behind, entry.behindBecause])).toEqual([
      ['behind', 'ahead', 'significantly_behind'],
    ]);
    expect(nextBatch(race)).toEqual({ batch: 1, keys: ['ahead'] });
  });

  it('a missing record (a transient failure) is not counted as evaluated; an invalid one is, without a pair', () => {
    const race = createRace({ plan, context: CONTEXT, settings: SETTINGS, incumbentMeans, keys: ['c'] });
    const batch = plan.batches[0]!;
    observe(race, 'c', [
      ...batch.slice(0, 18).map((slot) => ({ ...slot, valid: true, composite: 0.6 })),
      { ...batch[18]!, valid: false },
      { ...batch[19]!, valid: false, transient: true as const },
    ]);
    expect(entryOf(race, 'c')).toMatchObject({ evaluated: 19, next: 1 });
    expect(entryOf(race, 'c').differences).toHaveLength(18);
  });

  it('runRace decides complete candidates best first and rebases the rest after an acceptance', async () => {
    const truth = new Map([
      ['a', scoresFor(0.08, 4, ids, 5)],
      ['b', scoresFor(0.12, 5, ids, 5)],
    ]);
    const log: string[] = [];
    let evaluated = 0;
    let generation = 0;
    await runRace(
      [
        { key: 'a', name: 'a' },
        { key: 'b', name: 'b' },
      ],
      {
        start: (pool) =>
          createRace({
            plan,
            context: CONTEXT,
            settings: SETTINGS,
            incumbentMeans: generation === 0 ? incumbentMeans : new Map(ids.map((id) => [id, 0.72])),
            keys: pool.map((candidate) => candidate.key),
          }),
        evaluateBatch: async (candidate, slots) => {
          evaluated += slots.length;
          return slots.map((slot) => ({
            ...slot,
            valid: true,
            composite: truth.get(candidate.name)!.get(slotKey(slot))! + (generation > 0 ? 0.12 : 0),
          }));
        },
        onFutile: async (candidate) => {
          log.push(`${candidate.key} futile`);
          return true;
        },
        onComplete: async (candidate) => {
          log.push(`${candidate.key} decided`);
          return { accepted: candidate.key === 'b', proceed: true };
        },
        rebase: async (remaining) => {
          generation += 1;
          log.push(`rebased ${remaining.map((candidate) => candidate.key).join(',')}`);
          return remaining.map((candidate) => ({ key: `${candidate.name}'`, name: candidate.name }));
        },
      },
    );
    // After the shared first batch b leads and is likely to pass: a is set aside (not paid for) until b is
    // decided; b is accepted, a is rebased and raced again: 20 + 200 + 200 example-repeats, not 600.
    expect(log).toEqual(['b decided', 'rebased a', "a' decided"]);
    expect(evaluated).toBe(420);
  });
});
