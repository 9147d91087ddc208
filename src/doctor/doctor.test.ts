import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { StudyDatabase } from '../storage/study-database.ts';
import { openDatabase } from '../storage/database.ts';
import { acquireLease } from '../storage/lease.ts';
import { putVersion, setRegistryVersion } from '../storage/registry.ts';
import { planStudy, writeStudy } from '../init/init-study.ts';
import { writeRoutingStudy } from '../test-support/routing-study.ts';
import type { DoctorFinding } from './doctor.ts';
import { checkDatabase, checkSetup, diagnoseStudy } from './doctor.ts';

const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/intent');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function study(corpusFiles = ['work.yaml', 'operations.yaml', 'extra.jsonl']): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-doctor-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'corpus'));
  for (const file of ['kloop.yaml', 'program.md', 'playbook.yaml'])
    copyFileSync(path.join(EXAMPLE, file), path.join(dir, file));
  for (const file of corpusFiles) copyFileSync(path.join(EXAMPLE, 'corpus', file), path.join(dir, 'corpus', file));
  return dir;
}

async function database(file = ':memory:'): Promise<StudyDatabase> {
  const db = await openDatabase(file);
  cleanups.push(() => db.destroy());
  return db;
}

const byId = (findings: DoctorFinding[], id: string): DoctorFinding[] =>
  findings.filter((finding) => finding.id === id);
const problems = (findings: DoctorFinding[]): string[] =>
  findings.filter((finding) => finding.status === 'problem').map((finding) => finding.id);

describe('kloop doctor: the set-up checklist', () => {
  it('passes the reference study', () => {
    const findings = checkSetup(study(), { hasDatabase: false });
    expect(problems(findings)).toEqual([]);
    expect(byId(findings, 'setup.seed-examples')[0]?.message).toMatch(
      /^45 seed examples \(optimization \d+, anchor \d+, shadow \d+\)$/,
    );
    expect(byId(findings, 'setup.results-log')[0]?.status).toBe('info');
  });

  it('names too few seed examples, a missing register, missing stopping criteria', () => {
    const dir = study(['extra.jsonl']);
    writeFileSync(
      path.join(dir, 'kloop.yaml'),
      readFileSync(path.join(dir, 'kloop.yaml'), 'utf8').replace('  - corpus/*.yaml\n', ''),
    ); // every corpus pattern must match a file
    writeFileSync(
      path.join(dir, 'program.md'),
      readFileSync(path.join(dir, 'program.md'), 'utf8').replace('## Stopping criteria', '## Afterword'),
    );
    writeFileSync(
      path.join(dir, 'kloop.yaml'),
      readFileSync(path.join(dir, 'kloop.yaml'), 'utf8').replace(/^stopping:[\s\S]*?\n\n/m, ''),
    );
    const findings = checkSetup(dir, { hasDatabase: true });
    expect(problems(findings)).toEqual(['setup.program', 'setup.stopping', 'setup.seed-examples']);
    expect(byId(findings, 'setup.program')[0]?.message).toMatch(/program\.md:\d+: Stopping criteria: missing register/);
    expect(byId(findings, 'setup.seed-examples')[0]).toMatchObject({
      message: 'only 12 seed examples; the checklist asks for 15–25 or more',
    });
    for (const finding of findings.filter((item) => item.status === 'problem')) expect(finding.fix).toBeTruthy();
  });

  it('names a goal in two partitions (both records by file:line) as a problem, and a shadow too small as a note with the number needed', () => {
    const dir = study(['extra.jsonl']);
    writeFileSync(
      path.join(dir, 'kloop.yaml'),
      readFileSync(path.join(dir, 'kloop.yaml'), 'utf8').replace('  - corpus/*.yaml\n', ''),
    );
    const file = path.join(dir, 'corpus', 'extra.jsonl');
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const first = JSON.parse(lines[0]!) as { id: string; goal: string; partition: string };
    expect(first.partition).toBe('optimization');
    // A near-duplicate, not the same text: two words changed at the end of the goal.
    const twin = { ...first, id: 'reworded-twin', goal: `${first.goal} Thanks a lot.`, partition: 'anchor' };
    writeFileSync(file, `${[...lines, JSON.stringify(twin)].join('\n')}\n`);
    const findings = checkSetup(dir, { hasDatabase: false });
    expect(problems(findings)).toEqual(['setup.seed-examples', 'setup.partition-leaks']);
    expect(byId(findings, 'setup.partition-leaks')[0]?.message).toMatch(
      new RegExp(
        `^1 goal\\(s\\) in two partitions, which leaks one into the other \\(kloop run refuses to start\\): corpus/extra\\.jsonl:1 "${first.id}" \\(optimization\\) and corpus/extra\\.jsonl:13 "reworded-twin" \\(anchor\\) have near-duplicate goals \\(bigram Jaccard distance 0\\.\\d{3} < 0\\.3\\)$`,
      ),
    );
    expect(byId(findings, 'setup.partition-size.shadow')[0]).toMatchObject({
      status: 'info',
      message: expect.stringContaining(
        'the shadow partition holds 4 example(s): fewer than 5 paired differences cannot confirm a gain',
      ),
    });
    expect(byId(findings, 'setup.partition-leaks')).toHaveLength(1);
    expect(byId(findings, 'setup.partition-leaks')[0]?.status).toBe('problem');
  });

  it('finds no leak in the reference study', () => {
    expect(byId(checkSetup(study(), { hasDatabase: false }), 'setup.partition-leaks')[0]?.status).toBe('ok');
  });

  it('reports a broken kloop.yaml and stops there', () => {
    const dir = study();
    writeFileSync(path.join(dir, 'kloop.yaml'), 'artifact: [\n');
    const findings = checkSetup(dir, { hasDatabase: false });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ id: 'setup.config', status: 'problem' });
  });
});

describe('kloop doctor: the database', () => {
  it('a sound database is healthy', async () => {
    const db = await database();
    const seed = await putVersion(db, 'seed', 'seed', null, null);
    await setRegistryVersion(db, seed.id, 'seed');
    const findings = await checkDatabase(db);
    expect(problems(findings)).toEqual([]);
    expect(byId(findings, 'database.integrity')[0]?.message).toBe('SQLite integrity check: ok');
  });

  it('finds orphaned scores, dangling versions, registry pointers, hash mismatches and double decisions', async () => {
    const db = await database();
    const seed = await putVersion(db, 'seed', 'seed', null, null);
    await setRegistryVersion(db, seed.id, 'seed');
    const raw = (statement: string) => sql.raw(statement).execute(db);
    await raw('pragma foreign_keys = off');
    await raw(
      "insert into evaluation_examples (evaluation_id, example_id, valid, composite, score) values (999, 'x', 1, 0.5, '{}')",
    );
    const experiment = (round: number, delta: string, base: number, accepted: number | null) =>
      raw(
        `insert into experiments (run_id, round, proposer, base_version_id, candidate_hash, delta, rationale, decision, reason, evidence, accepted_version_id, fingerprint, seed, created_at)
         values (1, ${round}, 'p', ${base}, 'h', '${delta}', 'r', '${accepted === null ? 'refused' : 'accepted'}', 'x', '{}', ${accepted ?? 'null'}, 'f', 1, 't')`,
      );
    await experiment(1, 'same delta', seed.id, null);
    await experiment(1, 'same delta', seed.id, null);
    await experiment(2, 'points nowhere', 77, null);
    await raw("update registry set version_id = 55 where name = 'active'");
    await raw(`update artifact_versions set text = 'tampered' where id = ${seed.id}`);
    const findings = await checkDatabase(db);
    expect(problems(findings).sort()).toEqual(
      [
        'database.decided-once',
        'database.experiment-versions',
        'database.orphaned-examples',
        'database.registry',
        'database.version-hashes',
      ].sort(),
    );
    expect(byId(findings, 'database.decided-once')[0]?.message).toBe('round 1 decided "same delta" 2 times');
    expect(byId(findings, 'database.registry')[0]?.message).toContain('active → 55');
  });

  it('tells a live run from a dead one holding the lease', async () => {
    const db = await database();
    await acquireLease(db, { studyKey: '/s', hostname: 'h1', pid: 11, now: () => new Date('2025-01-01T00:00:00Z') });
    const live = await checkDatabase(db, {
      hostname: 'h1',
      isProcessAlive: () => true,
      now: () => new Date('2025-01-01T00:00:05Z'),
    });
    expect(byId(live, 'database.lease')[0]).toMatchObject({ status: 'info' });
    const dead = await checkDatabase(db, {
      hostname: 'h1',
      isProcessAlive: () => false,
      now: () => new Date('2025-01-01T00:00:05Z'),
    });
    expect(byId(dead, 'database.lease')[0]).toMatchObject({ status: 'problem' });
    expect(byId(dead, 'database.lease')[0]?.message).toMatch(
      /held by a dead run: pid 11 on host h1 .*process 11 no longer exists/,
    );
  });

  it('diagnoses a study folder with its database file, read-only', async () => {
    const dir = study();
    const file = path.join(dir, '.kloop', 'kloop.db');
    const db = await openDatabase(file);
    await putVersion(db, 'seed', 'seed', null, null);
    await db.destroy();
    const before = readFileSync(file);
    const report = await diagnoseStudy(dir, file, (name) => openDatabase(name, { readonly: true }));
    expect(report.healthy).toBe(true);
    expect(report.database).toBe(file);
    expect(readFileSync(file)).toEqual(before);
    const missing = await diagnoseStudy(dir, path.join(dir, 'nowhere.db'), (name) =>
      openDatabase(name, { readonly: true }),
    );
    expect(missing.database).toBeNull();
  });
});

describe('kloop doctor: the checklist for any task', () => {
  const statuses = (findings: DoctorFinding[]): Record<string, string> =>
    Object.fromEntries(
      findings.filter((finding) => finding.area === 'setup').map((finding) => [finding.id, finding.status]),
    );
  const noDatabase = (dir: string) =>
    diagnoseStudy(dir, path.join(dir, '.kloop', 'kloop.db'), (name) => openDatabase(name, { readonly: true }));

  it("a classification study on the routing-rules executor: every item of the seed checklist, in the task's terms", async () => {
    const dir = writeRoutingStudy(
      { optimization: { right: 4, wrong: 6 }, anchor: { right: 3, wrong: 0 }, shadow: { right: 4, wrong: 4 } },
      'schedule:\n  fast: "*/30 * * * *"\nnotebook:\n  git: true',
    );
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const report = await noDatabase(dir);
    expect(statuses(report.findings)).toEqual({
      'setup.config': 'ok',
      'setup.metric': 'ok',
      'setup.program': 'ok',
      'setup.invariants': 'ok',
      'setup.stopping': 'ok',
      'setup.seed-examples': 'ok',
      'setup.partition-leaks': 'ok',
      'setup.schedule': 'ok',
      'setup.results-log': 'info',
      'setup.instrument': 'ok',
      'setup.power': 'info',
      'setup.proposer': 'ok',
    });
    expect(report.healthy).toBe(true);
    const message = (id: string): string | undefined => byId(report.findings, id)[0]?.message;
    expect(message('setup.metric')).toBe(
      "metric identified and automated: the classification scorer's composite (classification@1:" +
        message('setup.metric')!.split('classification@1:')[1]!.split(')')[0] +
        ") over 1 weighted component (accuracy), reported as misroute rate (1 − composite); right/wrong outcomes, McNemar's exact test; executor routing-rules",
    );
    expect(message('setup.seed-examples')).toBe('21 seed examples (optimization 10, anchor 3, shadow 8)');
    expect(message('setup.invariants')).toBe(
      'invariants listed: the Constraints register, with 2 mechanical checks code applies to every candidate',
    );
    expect(message('setup.schedule')).toBe(
      'schedule (kloop schedule): the fast loop (B, optimization) runs at "*/30 * * * *"; the slow loop is your analysis: Loops A, C and D build apps from intents and skip a classification study, so read kloop history and kloop report in batches at your own cadence and revise program.md\'s Instructions',
    );
    expect(message('setup.results-log')).toBe(
      'no study database yet: `kloop run` creates it (and the git mirror: notebook.git)',
    );
    expect(message('setup.instrument')).toBe(
      'instrument tested: the routing-rules@2 executor scored the seed artifact on all 21 examples, 21 valid',
    );
    // The shadow has 4 misrouted tickets: one short of the 5 McNemar's exact test needs at α = 0.05; optimization has 6.
    expect(byId(report.findings, 'setup.power').map((finding) => finding.message)).toEqual([
      "power: no change can reach significance on shadow: the incumbent gets 4 of its 8 examples wrong, and McNemar's exact test needs at least 5 fixed with none broken (p = 0.5^5 = 0.031 ≤ α = 0.05); add at least 1 shadow example(s) the incumbent gets wrong",
    ]);
  });

  it('a study left to the default schedule gets a note with the keys to set', async () => {
    const dir = writeRoutingStudy({
      optimization: { right: 4, wrong: 6 },
      anchor: { right: 3, wrong: 0 },
      shadow: { right: 4, wrong: 4 },
    });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const [schedule] = byId((await noDatabase(dir)).findings, 'setup.schedule');
    expect(schedule).toMatchObject({
      status: 'info',
      fix: 'set the cadences in kloop.yaml: schedule: { fast: "0 * * * *" } (cron; `kloop schedule` runs them)',
    });
    expect(schedule?.message).toMatch(
      /^schedule \(kloop schedule\): the fast loop \(B, optimization\) runs at "0 \* \* \* \*" \(the default\); the slow loop is your analysis/,
    );
  });

  it('the intent study: its slow loops are scheduled too', async () => {
    const dir = study();
    writeFileSync(
      path.join(dir, 'kloop.yaml'),
      `${readFileSync(path.join(dir, 'kloop.yaml'), 'utf8')}\nschedule:\n  fast: "0 */2 * * *"\n  slow: "0 4 * * 0"\n`,
    );
    const findings = checkSetup(dir, { hasDatabase: false });
    expect(byId(findings, 'setup.schedule')[0]).toMatchObject({
      status: 'ok',
      message:
        'schedule (kloop schedule): the fast loop (B, optimization) runs at "0 */2 * * *"; the slow loops (A, C, D: analysis) at "0 4 * * 0"',
    });
  });

  it('a command study from kloop init whose program is broken: the instrument is a problem, named with the reason', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-doctor-init-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeStudy(dir, planStudy({ task: 'classification', executor: 'command' }).files, { force: true });
    const healthy = await noDatabase(dir);
    expect(byId(healthy.findings, 'setup.instrument')[0]?.message).toMatch(
      /^instrument tested: the command:[0-9a-f]+ executor scored the seed artifact on all 4 examples, 4 valid$/,
    );
    writeFileSync(path.join(dir, 'run.mjs'), 'process.exit(3);\n');
    const broken = await noDatabase(dir);
    const [instrument] = byId(broken.findings, 'setup.instrument');
    expect(instrument).toMatchObject({
      status: 'problem',
      message: expect.stringMatching(
        /^instrument broken: the command:[0-9a-f]+ executor scored the seed artifact on all 4 examples, 0 valid \(invalid: \w+ 4\)$/,
      ),
    });
    expect(instrument?.fix).toContain('kloop eval');
  });

  it('a custom study whose score.ts does not load: the metric finding names the module and its error', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-doctor-custom-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeStudy(dir, planStudy({ task: 'custom', executor: 'command' }).files, { force: true });
    writeFileSync(path.join(dir, 'score.ts'), 'export const nothing = 1;\n');
    const report = await noDatabase(dir);
    const [metric] = byId(report.findings, 'setup.metric');
    expect(metric?.status).toBe('problem');
    expect(metric?.message).toContain('score.ts');
    expect(metric?.message).not.toContain('loadStudyAsync');
    expect(byId(report.findings, 'setup.instrument')).toEqual([]); // nothing to evaluate without a metric
  });
});

describe('kloop doctor: an llm study', () => {
  it('names a malformed placeholder of the prompt (file and line), without a model call', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-doctor-llm-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeStudy(dir, planStudy({ task: 'classification', executor: 'llm' }).files, { force: true });
    const fresh = await diagnoseStudy(dir, path.join(dir, '.kloop', 'kloop.db'), (name) =>
      openDatabase(name, { readonly: true }),
    );
    expect(byId(fresh.findings, 'setup.instrument')[0]).toMatchObject({
      status: 'info',
      message:
        'instrument: not tested yet — the seed artifact has no stored evaluation, and the doctor makes no model calls',
    });
    writeFileSync(
      path.join(dir, 'prompt.md'),
      `${readFileSync(path.join(dir, 'prompt.md'), 'utf8')}\nAnswer for {{ticket.subject}}\n`,
    );
    const lines = readFileSync(path.join(dir, 'prompt.md'), 'utf8').split('\n').length - 1;
    const broken = await diagnoseStudy(dir, path.join(dir, '.kloop', 'kloop.db'), (name) =>
      openDatabase(name, { readonly: true }),
    );
    expect(byId(broken.findings, 'setup.instrument')[0]).toMatchObject({
      status: 'problem',
      message: `instrument broken: ${path.join(dir, 'prompt.md')}:${lines}: "{{ticket.subject}}" is not a placeholder: write {{input}} (the input's text), {{input.<field>}} or {{<field>}} (a field of an object input)`,
    });
  });
});
