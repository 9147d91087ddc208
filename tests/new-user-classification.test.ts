/**
 * Issue 35, done-when (a): a new user, with only the README and docs/init.md,
 * builds a classification study with keyword rules and improves it from the
 * CLI, offline. The study is the test's own (tests/faq-study.ts: a shop's
 * questions routed to four FAQ pages), made the way docs/init.md says:
 *
 * 1. `kloop init faq --task classification --executor command`;
 * 2. their pages in kloop.yaml `task.labels`, their keyword rules in
 *    rules.json (kloop's routing-rules format, the first rule that matches
 *    wins, the `default` page otherwise), their 24 questions in
 *    corpus/examples.yaml (12 optimization, 4 anchors, 8 shadow), and the
 *    program.md invariant that names the queues;
 * 3. `kloop doctor`, `kloop eval`, `kloop run`, `kloop show`.
 *
 * Nothing else of kloop.yaml is touched: the settings `kloop init` wrote
 * must work (with its old `proposer.maxEvaluations: 10` this study accepted
 * nothing; tests/stuck-factors.test.ts has the advice that run now gets).
 * The run uses the command executor as written, so `node run.mjs` starts
 * once per question for every edit the proposer scores.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kloop } from './cli-in-process.ts';
import { FAQ_LABELS, makeFaqStudy, type FaqQuestion } from './faq-study.ts';

/**
 * The queries people type into the shop's FAQ search box: terse, so each
 * offers the proposer few words (and the run starts few programs). 12
 * optimization (the seed misroutes the 10 that are not about hours), 4
 * anchors, 8 shadow (6 misrouted).
 */
const QUERIES: ReadonlyArray<[string, FaqQuestion['label'], FaqQuestion['partition']]> = [
  ['return unworn shoes', 'returns', 'optimization'],
  ['return a gift', 'returns', 'optimization'],
  ['return by post', 'returns', 'optimization'],
  ['how long can I return', 'returns', 'optimization'],
  ['points balance', 'loyalty', 'optimization'],
  ['missing points', 'loyalty', 'optimization'],
  ['spend my points', 'loyalty', 'optimization'],
  ['delivery cost', 'delivery', 'optimization'],
  ['delivery to the islands', 'delivery', 'optimization'],
  ['late delivery', 'delivery', 'optimization'],
  ['sunday opening', 'hours', 'optimization'],
  ['open on holidays', 'hours', 'optimization'],
  ['opening hours saturday', 'hours', 'anchor'],
  ['return a broken kettle', 'returns', 'anchor'],
  ['points for a free coffee', 'loyalty', 'anchor'],
  ['delivery tracking', 'delivery', 'anchor'],
  ['return without the box', 'returns', 'shadow'],
  ['return fee', 'returns', 'shadow'],
  ['points expiry', 'loyalty', 'shadow'],
  ['points without member card', 'loyalty', 'shadow'],
  ['evening delivery slot', 'delivery', 'shadow'],
  ['saturday delivery', 'delivery', 'shadow'],
  ['friday closing time', 'hours', 'shadow'],
  ['open easter monday', 'hours', 'shadow'],
];
const QUESTIONS: FaqQuestion[] = QUERIES.map(([text, label, partition], index) => ({
  id: `q-${String(index + 1).padStart(2, '0')}`,
  text,
  label,
  partition,
}));

const root = mkdtempSync(path.join(tmpdir(), 'kloop-new-user-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface RunJson {
  accepted: number;
  baseline: Record<'optimization' | 'anchor' | 'shadow', number>;
  best: Record<'optimization' | 'anchor' | 'shadow', number>;
  headline: { name: string; complement: boolean; baseline: Record<string, number>; best: Record<string, number> };
  stuck: unknown;
}

describe('a new user improves a keyword-rules FAQ router from the CLI, offline', () => {
  it('init, their own labels, rules and questions; doctor healthy; run accepts a change the shadow confirms', {
    timeout: 300_000,
  }, async () => {
    const dir = path.join(root, 'faq');
    const init = await kloop('init', dir, '--task', 'classification', '--executor', 'command');
    expect(init.code, init.stderr).toBe(0);
    makeFaqStudy(dir, QUESTIONS);
    const programPath = path.join(dir, 'program.md');
    const program = readFileSync(programPath, 'utf8');
    expect(program).toContain('the set of queues: billing, technical, account, shipping');
    writeFileSync(
      programPath,
      program.replace(
        'the set of queues: billing, technical, account, shipping',
        `the set of queues: ${FAQ_LABELS.join(', ')}`,
      ),
    );

    const doctor = await kloop('doctor', dir);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);

    // The seed rules send 10 of the 12 optimization questions to the default page.
    const evaluated = await kloop('eval', dir, '--json', '--quiet');
    expect(evaluated.code, evaluated.stderr).toBe(0);
    const seed = JSON.parse(evaluated.stdout) as { partitions: Record<string, { composite: number }> };
    expect(seed.partitions.optimization!.composite).toBeCloseTo(2 / 12, 12);

    const run = await kloop('run', dir, '--json');
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as RunJson;
    expect(report.stuck).toBeNull();
    expect(report.accepted).toBeGreaterThanOrEqual(1);
    expect(report.baseline).toEqual({ optimization: 2 / 12, anchor: 1 / 4, shadow: 2 / 8 });
    expect(report.headline).toMatchObject({ name: 'misroute rate', complement: true });
    expect(report.headline.baseline.optimization).toBeCloseTo(10 / 12, 12);
    expect(report.best.optimization).toBeGreaterThanOrEqual(0.5 + 2 / 12); // McNemar needs at least 5 of the 10 fixed
    expect(report.best.shadow).toBeGreaterThan(report.baseline.shadow);
    expect(report.best.anchor).toBeGreaterThanOrEqual(report.baseline.anchor);

    // The accepted experiment's evidence: significant on optimization, confirmed by the shadow.
    const history = JSON.parse((await kloop('history', dir, '--json')).stdout) as {
      experiments: Array<{ id: number; decision: string }>;
    };
    const accepted = history.experiments.find((experiment) => experiment.decision === 'accepted')!;
    const shown = await kloop('show', dir, String(accepted.id), '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const checks = (JSON.parse(shown.stdout) as { checks: Array<{ name: string; passed: boolean; statistic: number }> })
      .checks;
    expect(checks.find((check) => check.name === 'significance')).toMatchObject({ passed: true });
    expect(checks.find((check) => check.name === 'significance')!.statistic).toBeLessThan(0.05);
    expect(checks.find((check) => check.name === 'shadow')).toMatchObject({ passed: true });
    // The best rules are written beside the notebook, and are valid rules a user can copy over rules.json.
    const best = JSON.parse(readFileSync(path.join(dir, '.kloop', 'best-rules.json'), 'utf8')) as {
      default: string;
      rules: unknown[];
    };
    expect(best.default).toBe('hours');
  });
});
