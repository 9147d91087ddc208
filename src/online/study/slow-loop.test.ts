/**
 * The slow loop end to end on a small seeded world (in-process, SQLite, a
 * simulated clock): the A/A calibration first, then one experiment per idea
 * of program.md, each looked at daily on the units whose attribution windows
 * closed; a strong gain is accepted after its confirmation window, a variant
 * that raises unsubscribes is stopped for harm, and the study stops when the
 * ideas run out. A resumed study (a fresh handle on the same notebook) goes
 * on from the stored exposures and outcomes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../storage/database.ts';
import { loadOnlineConfig } from '../config.ts';
import { createIdeasProposer, type OnlineProposalContext, type OnlineProposer } from '../proposers/ideas-proposer.ts';
import { createOnlineStudy } from './online-study.ts';
import { runSlowLoopStep, type SlowLoopReport } from './slow-loop.ts';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

const DAY = 86_400_000;

/** mulberry32: a small seeded generator. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function studyFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-slow-loop-'));
  folders.push(folder);
  writeFileSync(
    path.join(folder, 'kloop.yaml'),
    `mode: online
artifact: strategy.md
metrics:
  primary: reply_rate
  guardrails: [{ name: unsubscribe_rate, direction: decrease, margin: 0.02 }]
  attributionWindow: 24h
  windows: { minUnitsPerArm: 300, confirmationUnits: 400, maxUnitsPerArm: 3000 }
`,
  );
  writeFileSync(path.join(folder, 'strategy.md'), 'Write short emails.\n');
  writeFileSync(
    path.join(folder, 'program.md'),
    '# Instructions\n- Ask one question.\n- Add a discount link.\n# Constraints\nnone\n# Stopping criteria\nwhen the ideas run out\n',
  );
  return folder;
}

/** Reply and unsubscribe rates of a variant by its lines. */
function rates(text: string): { reply: number; unsubscribe: number } {
  return {
    reply: text.includes('Ask one question.') ? 0.3 : 0.1,
    unsubscribe: text.includes('Add a discount link.') ? 0.12 : 0.01,
  };
}

async function simulateDays(
  folder: string,
  days: number,
  startDay: number,
  seed: number,
  proposer: OnlineProposer = createIdeasProposer(),
): Promise<SlowLoopReport[]> {
  const clock = { now: new Date(Date.UTC(2026, 0, 5) + startDay * DAY) };
  const db = await openDatabase(path.join(folder, '.kloop', 'kloop.db'));
  const study = createOnlineStudy(loadOnlineConfig(folder), db, () => clock.now);
  const reports: SlowLoopReport[] = [];
  const pending: { unit: string; metric: string; at: number }[] = [];
  try {
    for (let day = startDay; day < startDay + days; day += 1) {
      clock.now = new Date(Date.UTC(2026, 0, 5) + day * DAY);
      reports.push(await runSlowLoopStep(study, proposer));
      if (reports.at(-1)!.stopped !== undefined) break;
      for (let index = 0; index < 400; index += 1) {
        clock.now = new Date(Date.UTC(2026, 0, 5) + day * DAY + index * 60_000);
        const unit = `d${day}-r${index}`;
        const { text } = await study.assign(unit);
        const { reply, unsubscribe } = rates(text);
        // Each recipient's draws depend on the seed and its id only, so a run split in two sees the same world.
        const draw = random(seed * 1_000_003 + day * 1000 + index);
        if (draw() < reply) pending.push({ unit, metric: 'reply_rate', at: clock.now.getTime() + 3_600_000 });
        if (draw() < unsubscribe)
          pending.push({ unit, metric: 'unsubscribe_rate', at: clock.now.getTime() + 7_200_000 });
      }
      clock.now = new Date(Date.UTC(2026, 0, 5) + (day + 1) * DAY - 1);
      const due = pending.filter((outcome) => outcome.at <= clock.now.getTime());
      pending.splice(0, pending.length, ...pending.filter((outcome) => outcome.at > clock.now.getTime()));
      const lines = due
        .map((outcome) =>
          JSON.stringify({
            unit: outcome.unit,
            metric: outcome.metric,
            value: 1,
            at: new Date(outcome.at).toISOString(),
          }),
        )
        .join('\n');
      const batch = await study.recordOutcomeLines(lines, 'test');
      expect(batch.refused).toEqual([]);
    }
  } finally {
    await study.close();
  }
  return reports;
}

describe('the slow loop of an online study', () => {
  it('calibrates, accepts the gain after confirmation, stops the harm, and stops when the ideas run out', async () => {
    const folder = studyFolder();
    const reports = await simulateDays(folder, 40, 0, 7);
    const last = reports.at(-1)!;
    expect(
      last.experiments.map((experiment) => [
        experiment.kind,
        experiment.status,
        experiment.reason,
        experiment.rationale,
      ]),
    ).toEqual([
      ['aa', 'calibrated', 'calibrated', 'A/A calibration: the incumbent against itself'],
      ['ab', 'accepted', 'accepted', 'Ask one question.'],
      ['ab', 'refused', 'harm', 'Add a discount link.'],
    ]);
    expect(last.stopped?.reason).toBe('no_new_proposals');
    const accepted = last.experiments[1]!;
    expect(accepted.units.confirmation.incumbent).toBeGreaterThan(0);
    expect(accepted.checks.map((check) => [check.name, check.verdict])).toEqual([
      ['srm', 'pass'],
      ['harm', 'pass'],
      ['minimum_units', 'pass'],
      ['primary', 'pass'],
      ['guardrails', 'pass'],
      ['confirmation', 'pass'],
    ]);
    expect(last.activeVersionId).toBe(accepted.candidateVersionId);
  });

  it("the proposer reads the decided experiments' decision windows only, never a confirmation window", async () => {
    const folder = studyFolder();
    const seen: OnlineProposalContext[] = [];
    const ideas = createIdeasProposer();
    const spy: OnlineProposer = {
      name: 'ideas',
      propose: (context) => (seen.push(structuredClone(context)), ideas.propose(context)),
    };
    const reports = await simulateDays(folder, 40, 0, 7, spy);
    const accepted = reports.at(-1)!.experiments.find((experiment) => experiment.status === 'accepted')!;
    const later = seen.find((context) => context.decided.some((experiment) => experiment.id === accepted.id))!;
    const summary = later.decided.find((experiment) => experiment.id === accepted.id)!;
    // What it was told is the decision window frozen when the confirmation window opened: not one unit of the confirmation window.
    expect(summary.decisionWindow?.units).toBe(accepted.primary.analysedUnits);
    expect(accepted.units.confirmation.incumbent + accepted.units.confirmation.candidate).toBeGreaterThan(0);
    expect(JSON.stringify(later)).not.toMatch(/confirmation/i);
  });

  it('a resumed study re-uses every stored exposure and outcome: split in two, it ends as the run in one piece', async () => {
    const whole = studyFolder();
    const split = studyFolder();
    await simulateDays(whole, 14, 0, 11);
    await simulateDays(split, 6, 0, 11);
    await simulateDays(split, 8, 6, 11);
    const read = async (folder: string) => {
      const db = await openDatabase(path.join(folder, '.kloop', 'kloop.db'));
      try {
        return {
          experiments: await db.selectFrom('online_experiments').selectAll().orderBy('id').execute(),
          looks: await db.selectFrom('online_looks').selectAll().orderBy('id').execute(),
          exposures: Number(
            (
              await db
                .selectFrom('exposures')
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          ),
          outcomes: Number(
            (
              await db
                .selectFrom('outcomes')
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          ),
        };
      } finally {
        await db.destroy();
      }
    };
    const [one, two] = [await read(whole), await read(split)];
    expect(two.exposures).toBe(14 * 400);
    expect(two).toEqual(one);
    expect(one.experiments.length).toBeGreaterThanOrEqual(2);
    expect(one.looks.length).toBe(13); // one look a day after the first, every one stored once
  });
});
