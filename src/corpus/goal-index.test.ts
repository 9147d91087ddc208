import { describe, expect, it } from 'vitest';
import { bigramJaccardDistance } from '../stats/index.ts';
import { GoalIndex } from './goal-index.ts';

const GOALS = [
  'Clients book appointments with a stylist and pay a deposit.',
  'Clients book appointments with a barber and pay a deposit.',
  'Technicians log work orders on site.',
  'Technicians log work orders on site!',
  'Inventory',
  'inventory',
  '!!!',
  '',
  'A warehouse tracks stock levels of every product and reorders from suppliers.',
];

describe('GoalIndex', () => {
  it('gives exactly the distances of bigramJaccardDistance, nearest first, edge cases included', () => {
    const index = new GoalIndex<number>();
    GOALS.forEach((goal, position) => index.add(goal, position));
    for (const goal of GOALS) {
      const expected = GOALS.map((other, position) => ({
        entry: position,
        distance: bigramJaccardDistance(goal, other),
      }))
        .filter((match) => match.distance < 1)
        .sort((left, right) => left.distance - right.distance || left.entry - right.entry);
      expect(index.near(goal, 1), goal).toEqual(expected);
    }
    const one = new GoalIndex<string>();
    one.add(GOALS[0]!, 'salon');
    expect(bigramJaccardDistance(GOALS[0]!, GOALS[1]!)).toBeGreaterThan(0.3);
    expect(one.nearest(GOALS[1]!, 0.3)).toBeUndefined();
    one.add(GOALS[2]!, 'technicians');
    expect(one.nearest(GOALS[3]!, 0.3)).toEqual({ entry: 'technicians', distance: 0 });
  });
});
