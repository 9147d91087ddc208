/**
 * The notebook in the terminal and in reports, on a finished copy of the
 * reference study (with the git notebook on; tests/reference-study.ts): `kloop history` with composite,
 * Δ and p-value; `kloop diff`; `kloop activate` then `status` and `build`;
 * `kloop report` as CSV, JSON and HTML; `kloop doctor` on the git mirror; the
 * viewer's API and its token rules; and the same study turned into a notebook
 * of the earlier per-partition store (wholly, and for its first decisions
 * only), which must read the same.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../src/artifact/content-hash.ts';
import { reconstructPartitions } from '../src/corpus/lifecycle.ts';
import { readCorpusEvents, readDecisionRecords } from '../src/corpus/lifecycle-store.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { createViewApp } from '../src/view/view-server.ts';
import { kloop } from './cli-in-process.ts';
import { copyReferenceStudy, removeStudy } from './reference-study.ts';
import { openNotebook } from '../src/storage/notebook/index.ts';

const repo = path.resolve(import.meta.dirname, '..');
/** Bound on the steps that run the loop (a failure bound only: nothing waits for it to pass); on a loaded machine they outgrow the default 60 s. */
const SLOW_MS = 240_000;
let dir: string;
let runReport: {
  baseline: Record<string, number>;
  best: Record<string, number>;
  bestVersion: number;
  baselineVersion: number;
  experiments: number;
};

interface HistoryEntry {
  id: number;
  decision: string;
  reason: string;
  delta: string;
  composite: number | null;
  incumbentComposite: number | null;
  compositeDelta: number | null;
  pValue: number | null;
  acceptedVersion: number | null;
  scores: {
    candidate: Record<string, number | null>;
    incumbentBefore: Record<string, number | null>;
    incumbentAfter: Record<string, number | null>;
  };
  usage: { calls: number; inputTokens: number; outputTokens: number; costUsd: number };
  repeats: { candidate: number; incumbent: number };
  scoreSource: string;
}
interface History {
  experiments: HistoryEntry[];
  registryEvents: Array<{ version: number; reason: string; actor: string | null }>;
}

async function history(): Promise<History> {
  const { code, stdout } = await kloop('history', dir, '--json');
  expect(code).toBe(0);
  return JSON.parse(stdout) as History;
}

/** RFC 4180 rows (quoted fields with doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index]!;
    if (quoted) {
      if (character === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (character === '"') quoted = false;
      else field += character;
    } else if (character === '"') quoted = true;
    else if (character === ',') {
      row.push(field);
      field = '';
    } else if (character === '\n') {
      row.push(field.replace(/\r$/, ''));
      rows.push(row);
      row = [];
      field = '';
    } else field += character;
  }
  return rows;
}

const PARTITION_NAMES = ['optimization', 'anchor', 'shadow'] as const;

/**
 * Turns the notebook of `studyDir` into one of the earlier store for the
 * experiments up to `lastLegacy`: per-partition evaluations (`evaluations`,
 * keyed by membership hash and repeat, and `evaluation_examples`), as the
 * evaluator wrote them then, built from the stored results on each decision's
 * partitions (replayed from the corpus history), and evidence without the
 * gate's `scores`; the per-example results keep no usage, as the migration's
 * copies. The membership hash is any identifier of the members (the viewer
 * only compares them).
 */
async function toLegacyNotebook(studyDir: string, lastLegacy: number): Promise<number> {
  const db = await openDatabase(studyDatabasePath(studyDir));
  let converted = 0;
  try {
    const events = await readCorpusEvents(openNotebook(db));
    const decisions = await readDecisionRecords(openNotebook(db));
    const hashes = new Map(
      (await db.selectFrom('artifact_versions').select(['id', 'hash']).execute()).map((row) => [row.id, row.hash]),
    );
    const experiments = await db
      .selectFrom('experiments')
      .selectAll()
      .where('id', '<=', lastLegacy)
      .orderBy('id')
      .execute();
    for (const experiment of experiments) {
      const evidence = JSON.parse(experiment.evidence) as {
        scores?: Record<string, unknown> & { repeats: { candidate: number; incumbent: number } };
      };
      if (evidence.scores === undefined) continue;
      const { partitions } = reconstructPartitions(events, decisions, experiment.id);
      // An evaluation of these memberships ran after the corpus moves that made them (its rows may be older: reused).
      const since =
        events
          .filter((event) => (event.experimentId ?? 0) < experiment.id)
          .map((event) => event.createdAt)
          .sort()
          .at(-1) ?? '';
      for (const partition of PARTITION_NAMES) {
        if (evidence.scores[partition] === undefined) continue;
        const members = partitions[partition];
        const membership = contentHash(`${partition}\n${members.join('\n')}`).slice(0, 16);
        for (const [artifactHash, repeats] of [
          [experiment.candidate_hash, evidence.scores.repeats.candidate],
          [hashes.get(experiment.base_version_id)!, evidence.scores.repeats.incumbent],
        ] as const) {
          for (let repeat = 0; repeat < repeats; repeat += 1) {
            const exists = await db
              .selectFrom('evaluations')
              .select('id')
              .where('fingerprint', '=', experiment.fingerprint)
              .where('artifact_hash', '=', artifactHash)
              .where('partition_hash', '=', membership)
              .where('repeat', '=', repeat)
              .executeTakeFirst();
            if (exists !== undefined) continue;
            const rows = await db
              .selectFrom('example_results')
              .selectAll()
              .where('fingerprint', '=', experiment.fingerprint)
              .where('artifact_hash', '=', artifactHash)
              .where('repeat', '=', repeat)
              .where('example_id', 'in', members)
              .execute();
            expect(rows, `results of ${artifactHash.slice(0, 8)} on ${partition}, repeat ${repeat}`).toHaveLength(
              members.length,
            );
            const valid = rows.filter((row) => row.valid === 1);
            const inserted = await db
              .insertInto('evaluations')
              .values({
                fingerprint: experiment.fingerprint,
                artifact_hash: artifactHash,
                partition,
                partition_hash: membership,
                repeat,
                composite:
                  valid.length === 0 ? null : valid.reduce((sum, row) => sum + row.composite!, 0) / valid.length,
                components: '{}',
                metrics: '{}',
                invalid: rows.length - valid.length,
                total: rows.length,
                usage: JSON.stringify({ inputTokens: 0, outputTokens: 0, costUsd: 0 }),
                latency_ms: 0,
                created_at: [...rows.map((row) => row.created_at), since].sort().at(-1)!,
              })
              .returning('id')
              .executeTakeFirstOrThrow();
            for (const row of rows)
              await db
                .insertInto('evaluation_examples')
                .values({
                  evaluation_id: inserted.id,
                  example_id: row.example_id,
                  valid: row.valid,
                  composite: row.composite,
                  score: row.score,
                })
                .execute();
          }
        }
      }
      const { scores: _scores, ...rest } = evidence;
      await db
        .updateTable('experiments')
        .set({ evidence: JSON.stringify(rest) })
        .where('id', '=', experiment.id)
        .execute();
      converted += 1;
    }
    await db
      .updateTable('example_results')
      .set({ usage: JSON.stringify({ inputTokens: 0, outputTokens: 0, costUsd: 0 }) })
      .execute();
  } finally {
    await db.destroy();
  }
  return converted;
}

/** Executor calls of the per-partition store: Σ total of `evaluations`. */
function legacyCalls(study: string): number {
  const sqlite = new Database(studyDatabasePath(study), { readonly: true });
  try {
    return Number(
      (sqlite.prepare('select coalesce(sum(total), 0) as calls from evaluations').get() as { calls: number }).calls,
    );
  } finally {
    sqlite.close();
  }
}

/** Every number of `actual` within `tolerance` of `expected` (sums in another order differ in the last bits), everything else equal. */
function expectSameScores(actual: unknown, expected: unknown, where: string, tolerance = 1e-9): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    expect(Math.abs(actual - expected), `${where}: ${actual} vs ${expected}`).toBeLessThan(tolerance);
    return;
  }
  if (expected !== null && typeof expected === 'object' && actual !== null && typeof actual === 'object') {
    expect(Object.keys(actual).sort(), where).toEqual(Object.keys(expected).sort());
    for (const key of Object.keys(expected))
      expectSameScores(
        (actual as Record<string, unknown>)[key],
        (expected as Record<string, unknown>)[key],
        `${where}.${key}`,
        tolerance,
      );
    return;
  }
  expect(actual, where).toEqual(expected);
}

/**
 * Turns copies of `study` into notebooks of the earlier store (every decision,
 * then its first half only) and checks that history and the JSON report read
 * the same from them as from the evidence.
 */
async function expectLegacyReadsTheSame(study: string): Promise<void> {
  const readAll = async (folder: string) => {
    const history = JSON.parse((await kloop('history', folder, '--json')).stdout) as {
      experiments: Array<Record<string, unknown>>;
    };
    const report = JSON.parse((await kloop('report', folder, '--format', 'json')).stdout) as {
      experiments: Array<{
        id: number;
        scoreSource: string;
        changes: Array<{
          exampleId: string;
          partition: string;
          before: number | null;
          after: number | null;
          change: number | null;
          notes: string[];
        }>;
        compared: unknown;
      }>;
      overview: { trail: unknown[]; budget: { evaluations: { calls: number } } };
      versions: { versions: Array<{ id: number; composites: unknown }> };
    };
    return { history, report };
  };
  const current = await readAll(study);
  expect(current.report.experiments.every((experiment) => experiment.scoreSource === 'evidence')).toBe(true);
  const decided = current.history.experiments.length;
  // Every decision of the earlier store; then as that notebook was before its migration to results per example
  // (read-only commands do not migrate); then only the first half of the decisions.
  for (const [lastLegacy, unmigrated] of [
    [decided, false],
    [decided, true],
    [Math.floor(decided / 2), false],
  ] as const) {
    const copy = mkdtempSync(path.join(tmpdir(), 'kloop-view-legacy-'));
    try {
      cpSync(study, copy, { recursive: true });
      expect(await toLegacyNotebook(copy, lastLegacy)).toBe(lastLegacy);
      if (unmigrated) {
        const sqlite = new Database(studyDatabasePath(copy));
        try {
          sqlite.exec(
            "drop table example_results; drop table proposals; alter table experiments drop column change; alter table registry_events drop column actor; delete from kysely_migration where name >= '0006'",
          );
        } finally {
          sqlite.close();
        }
      }
      const legacy = await readAll(copy);
      expect(legacy.report.experiments.map((experiment) => experiment.scoreSource)).toEqual(
        current.report.experiments.map((experiment) => (experiment.id <= lastLegacy ? 'evaluations' : 'evidence')),
      );
      for (const [index, experiment] of current.history.experiments.entries()) {
        const { composite, incumbentComposite, compositeDelta, pValue, welchPValue, scores, usage } = experiment;
        const read = legacy.history.experiments[index]!;
        expectSameScores(
          {
            composite: read.composite,
            incumbentComposite: read.incumbentComposite,
            compositeDelta: read.compositeDelta,
            pValue: read.pValue,
            welchPValue: read.welchPValue,
            scores: read.scores,
            usage: read.usage,
          },
          { composite, incumbentComposite, compositeDelta, pValue, welchPValue, scores, usage },
          `experiment ${String(experiment.id)}`,
        );
      }
      for (const [index, experiment] of current.report.experiments.entries()) {
        const read = legacy.report.experiments[index]!;
        const byExample = (changes: typeof experiment.changes) =>
          Object.fromEntries(
            changes.map((change) => [
              `${change.partition}/${change.exampleId}`,
              { notes: change.notes, before: change.before, after: change.after, change: change.change },
            ]),
          );
        // The evidence keeps per-example means to 6 decimals; the per-partition store at full precision.
        expectSameScores(
          byExample(read.changes),
          byExample(experiment.changes),
          `changes of experiment ${experiment.id}`,
          2e-6,
        );
        expect(read.compared).toEqual(experiment.compared);
      }
      expectSameScores(legacy.report.overview.trail, current.report.overview.trail, 'trail');
      // Unmigrated there are no results per example to compute a version from: a version no decision measured on the
      // latest partitions has no composite there (the conversion wrote evaluations of the decisions' sides only).
      const versionScores = (page: typeof legacy.report, reference?: typeof legacy.report) =>
        page.versions.versions.map((version, index) =>
          Object.fromEntries(
            Object.entries(version.composites as Record<string, number | null>).map(([partition, value]) => [
              partition,
              reference !== undefined &&
              (reference.versions.versions[index]!.composites as Record<string, number | null>)[partition] === null
                ? null
                : value,
            ]),
          ),
        );
      expectSameScores(
        versionScores(legacy.report),
        versionScores(current.report, unmigrated ? legacy.report : undefined),
        'versions',
      );
      // Unmigrated, the calls are the per-partition store's (here: what the conversion wrote of it).
      if (!unmigrated)
        expect(legacy.report.overview.budget.evaluations.calls).toBe(current.report.overview.budget.evaluations.calls);
      else expect(legacy.report.overview.budget.evaluations.calls).toBe(legacyCalls(copy));
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }
}

// The shared reference study (tests/reference-study.ts: 12 experiments, the git notebook on), run once for this file and others.
beforeAll(async () => {
  const { dir: copy, run } = await copyReferenceStudy('kloop-view-cli-');
  dir = copy;
  runReport = JSON.parse(run.stdout);
}, SLOW_MS);
afterAll(() => removeStudy(dir));

describe('kloop history', () => {
  it('carries composite, Δ, p-value and decision per experiment, as the gate recorded them in the evidence', async () => {
    const { experiments } = await history();
    const decided = experiments.filter((experiment) => experiment.decision !== 'skipped');
    expect(decided).toHaveLength(runReport.experiments);
    for (const experiment of decided) {
      const { stdout } = await kloop('show', dir, String(experiment.id), '--json');
      const checks = (
        JSON.parse(stdout) as { checks: Array<{ name: string; statistic: number | null; data?: { pValue?: number } }> }
      ).checks;
      expect(experiment.compositeDelta).toBe(checks.find((check) => check.name === 'margin')!.statistic);
      const significance = checks.find((check) => check.name === 'significance');
      expect(experiment.pValue).toBe(significance?.data?.pValue ?? null);
      expect(experiment.composite).toEqual(expect.any(Number));
      // With no invalid output, Δ over the shared examples is the difference of the composites.
      expect(experiment.compositeDelta!).toBeCloseTo(experiment.composite! - experiment.incumbentComposite!, 5);
    }
    // Every score of a decision the gate compared is its evidence's, as recorded.
    const db = await openDatabase(studyDatabasePath(dir), { readonly: true });
    try {
      const rows = await db.selectFrom('experiments').select(['id', 'evidence']).orderBy('id').execute();
      for (const row of rows) {
        const recorded = (
          JSON.parse(row.evidence) as {
            scores?: Record<
              string,
              { incumbent: number | null; candidate: number | null; evaluated: number } | undefined
            > & { repeats: { candidate: number; incumbent: number } };
          }
        ).scores;
        const experiment = experiments.find((entry) => entry.id === row.id)!;
        if (recorded === undefined) {
          expect(experiment.decision).toBe('skipped');
          continue;
        }
        for (const partition of ['optimization', 'anchor', 'shadow'] as const) {
          expect(experiment.scores.candidate[partition]).toBe(recorded[partition]?.candidate ?? null);
          if (recorded[partition] !== undefined)
            expect(experiment.scores.incumbentBefore[partition]).toBe(recorded[partition]!.incumbent);
        }
        expect(experiment.usage.calls).toBe(
          ['optimization', 'anchor', 'shadow'].reduce(
            (sum, partition) => sum + (recorded[partition]?.evaluated ?? 0),
            0,
          ),
        );
        expect(experiment.repeats).toEqual({
          candidate: recorded.repeats.candidate,
          incumbent: recorded.repeats.incumbent,
        });
        expect(experiment.scoreSource).toBe('evidence');
      }
    } finally {
      await db.destroy();
    }
    // The incumbent after the last accepted experiment is the run's best, partition by partition.
    const lastAccepted = decided.filter((experiment) => experiment.decision === 'accepted').at(-1)!;
    expect(lastAccepted.acceptedVersion).toBe(runReport.bestVersion);
    expect(lastAccepted.scores.incumbentAfter).toEqual(runReport.best);
    expect(decided[0]!.scores.incumbentBefore).toEqual(runReport.baseline);

    const { stdout: text } = await kloop('history', dir);
    expect(text.split('\n')[0]).toMatch(/^id\s+round\s+decision\s+reason\s+composite\s+Δ\s+p\s+delta$/);
    const accepted = text.split('\n').find((line) => line.startsWith(`${lastAccepted.id} `))!;
    expect(accepted).toContain(lastAccepted.composite!.toFixed(4));
    expect(accepted).toContain(`+${lastAccepted.compositeDelta!.toFixed(4)}`);
  });
});

describe('a notebook of the earlier per-partition store', () => {
  it('reads the same scores, per-example changes, trail and versions from the stored evaluations as from the evidence, wholly or for its first decisions', async () => {
    await expectLegacyReadsTheSame(dir);
  });
});

describe('kloop diff', () => {
  it('prints two versions as a unified diff, and refuses an unknown version', async () => {
    const { code, stdout } = await kloop('diff', dir, 'seed', 'active');
    expect(code).toBe(0);
    expect(stdout.split('\n').slice(0, 2)).toEqual([
      `--- version ${runReport.baselineVersion}`,
      `+++ version ${runReport.bestVersion}`,
    ]);
    expect(stdout).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@$/m);
    const json = JSON.parse(
      (await kloop('diff', dir, String(runReport.baselineVersion), String(runReport.bestVersion), '--json')).stdout,
    ) as { added: number; removed: number; rows: Array<{ kind: string }> };
    expect(json.added).toBe(
      stdout.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++')).length,
    );
    expect(json.rows.some((row) => row.kind === 'change' || row.kind === 'add')).toBe(true);
    expect((await kloop('diff', dir, 'seed', 'seed')).stdout).toMatch(/identical/);
    const missing = await kloop('diff', dir, 'seed', '999');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no version 999');
  });
});

describe('kloop report', () => {
  it('csv: one row per experiment, a missing score an empty field', async () => {
    const { code, stdout } = await kloop('report', dir, '--format', 'csv');
    expect(code).toBe(0);
    const rows = parseCsv(stdout);
    const [header, ...body] = rows;
    const { experiments } = await history();
    expect(body).toHaveLength(experiments.length);
    const column = (name: string): number => header!.indexOf(name);
    for (const [index, experiment] of experiments.entries()) {
      const row = body[index]!;
      expect(row).toHaveLength(header!.length);
      expect(Number(row[column('id')])).toBe(experiment.id);
      expect(row[column('decision')]).toBe(experiment.decision);
      expect(row[column('delta')]).toBe(experiment.delta); // quotes in deltas survive the quoting
      expect(row[column('composite')]).toBe(experiment.composite === null ? '' : String(experiment.composite));
      expect(row[column('p_value')]).toBe(experiment.pValue === null ? '' : String(experiment.pValue));
    }
  });

  it('json: every experiment with its checks and per-example changes; html: one file with everything inlined', async () => {
    const json = JSON.parse((await kloop('report', dir, '--format', 'json')).stdout) as {
      experiments: Array<{ checks: unknown[]; changes: unknown[] }>;
      overview: { trail: unknown[] };
    };
    expect(json.experiments).toHaveLength((await history()).experiments.length);
    expect(json.experiments.every((experiment) => experiment.checks.length > 0)).toBe(true);
    expect(json.overview.trail.length).toBe(json.experiments.length + 1);
    const out = path.join(dir, 'report.html');
    const written = await kloop('report', dir, '--format', 'html', '--out', out, '--quiet');
    expect(written.code).toBe(0);
    expect(written.stdout.trim()).toBe(out);
    const html = readFileSync(out, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+stylesheet/);
    expect(html).toContain('window.KLOOP_REPORT = ');
    expect(html).toContain(
      readFileSync(path.join(repo, 'node_modules', 'chart.js', 'dist', 'chart.umd.min.js'), 'utf8').slice(0, 200),
    );
    expect((await kloop('report', dir, '--format', 'pdf')).code).toBe(2);
  });
});

describe('kloop activate (a rollback)', () => {
  it('makes the version active for status and build, records who did it in history, and commits it to the git notebook', async () => {
    expect((await kloop('activate', dir, 'seed')).code).toBe(2); // --by is required
    expect((await kloop('activate', dir, '999', '--by', 'Ana')).code).toBe(2);
    // A study that never ran: nothing to activate, and no notebook created by asking.
    const fresh = mkdtempSync(path.join(tmpdir(), 'kloop-view-fresh-'));
    try {
      cpSync(path.join(repo, 'examples', 'intent'), fresh, {
        recursive: true,
        filter: (source) => !source.includes('.kloop'),
      });
      const never = await kloop('activate', fresh, 'seed', '--by', 'Ana');
      expect(never.code).toBe(2);
      expect(never.stderr).toContain('no database yet');
      expect(fs.existsSync(path.join(fresh, '.kloop'))).toBe(false);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
    const { code, stdout } = await kloop(
      'activate',
      dir,
      'seed',
      '--by',
      'Ana Lima',
      '--note',
      'the booking anchors regressed in production',
      '--json',
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      ok: true,
      activeVersion: runReport.baselineVersion,
      previousVersion: runReport.bestVersion,
      rollback: true,
      changed: true,
      gitCommits: 1,
    });

    const status = JSON.parse((await kloop('status', dir, '--json')).stdout) as { activeVersion: number };
    expect(status.activeVersion).toBe(runReport.baselineVersion);
    const built = JSON.parse(
      (
        await kloop(
          'build',
          dir,
          'a physio clinic where patients book sessions with therapists',
          '--json',
          '--no-signal',
        )
      ).stdout,
    ) as { artifactVersionId: number };
    expect(built.artifactVersionId).toBe(runReport.baselineVersion);

    const { registryEvents } = await history();
    expect(registryEvents.at(-1)).toMatchObject({
      version: runReport.baselineVersion,
      actor: 'Ana Lima',
      reason: `activated by Ana Lima (rollback from version ${runReport.bestVersion}): the booking anchors regressed in production`,
    });
    expect((await kloop('history', dir)).stdout).toMatch(
      new RegExp(
        `v${runReport.baselineVersion}\\s+activated by Ana Lima \\(rollback from version ${runReport.bestVersion}\\).*Ana Lima$`,
        'm',
      ),
    );

    const mirror = path.join(dir, '.kloop', 'notebook');
    const log = await git.log({ fs, dir: mirror });
    expect(log[0]!.commit.author.name).toBe('Ana Lima');
    expect(log).toHaveLength(registryEvents.length); // the seed, each accepted version, the rollback
    expect(log.filter((entry) => entry.commit.message.includes('accepted: version')).length).toBe(
      registryEvents.filter((event) => / accepted$/.test(event.reason)).length,
    );
    expect(readFileSync(path.join(mirror, 'playbook.yaml'), 'utf8')).toBe(
      readFileSync(path.join(dir, 'playbook.yaml'), 'utf8'),
    );

    const doctor = await kloop('doctor', dir, '--json');
    const findings = (JSON.parse(doctor.stdout) as { findings: Array<{ id: string; status: string }> }).findings;
    expect(findings.find((finding) => finding.id === 'notebook.git')).toMatchObject({ status: 'ok' });
    expect(doctor.code).toBe(0);

    // A mirror that no longer matches the database is a problem doctor names.
    writeFileSync(path.join(mirror, 'playbook.yaml'), 'edited by hand\n');
    await git.add({ fs, dir: mirror, filepath: 'playbook.yaml' });
    await git.commit({
      fs,
      dir: mirror,
      message: 'hand edit',
      author: { name: 'someone', email: 'someone@example.invalid' },
    });
    const broken = await kloop('doctor', dir);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(
      /PROBLEM git notebook .* does not match the database: 1 commits name no move of the database/,
    );
  });
});

describe('the viewer API', () => {
  it('is read-only without a token, and with one needs it on every change', async () => {
    const db = await openDatabase(studyDatabasePath(dir));
    const token = 'a-test-token-of-24-chars';
    const readOnly = createViewApp({ db, studyDir: dir, token: null });
    const guarded = createViewApp({ db, studyDir: dir, token });
    try {
      const body = JSON.stringify({ by: 'Ana' });
      const headers = { Host: '127.0.0.1:8790', 'Content-Type': 'application/json' };
      const overview = await readOnly.app.request('/api/overview', { headers });
      expect(overview.status).toBe(200);
      expect(((await overview.json()) as { experiments: unknown[] }).experiments).toHaveLength(
        (await history()).experiments.length,
      );
      expect((await readOnly.app.request('/api/versions/2/activate', { method: 'POST', headers, body })).status).toBe(
        403,
      );
      expect((await guarded.app.request('/api/versions/2/activate', { method: 'POST', headers, body })).status).toBe(
        401,
      );
      expect(
        (
          await guarded.app.request('/api/versions/2/activate', {
            method: 'POST',
            headers: { ...headers, Authorization: 'Bearer wrong-token-wrong-token' },
            body,
          })
        ).status,
      ).toBe(401);
      expect(
        (
          await guarded.app.request('/api/versions/2/activate', {
            method: 'POST',
            headers: { ...headers, Authorization: `Bearer ${token}` },
            body: JSON.stringify({ by: ' ' }),
          })
        ).status,
      ).toBe(400);
      // From a page of another origin, even with the token: refused.
      expect(
        (
          await guarded.app.request('/api/versions/2/activate', {
            method: 'POST',
            headers: { ...headers, Authorization: `Bearer ${token}`, Origin: 'http://attacker.example' },
            body,
          })
        ).status,
      ).toBe(403);
      const done = await guarded.app.request('/api/versions/2/activate', {
        method: 'POST',
        headers: { ...headers, Authorization: `Bearer ${token}`, Origin: 'http://127.0.0.1:8790' },
        body,
      });
      expect(done.status).toBe(200);
      expect(await done.json()).toMatchObject({ ok: true, versionId: 2, changed: true });
      expect((await history()).registryEvents.at(-1)).toMatchObject({ version: 2, actor: 'Ana' });
      // No answer to a page served under another host name (DNS rebinding).
      expect((await readOnly.app.request('/api/overview', { headers: { Host: 'attacker.example:8790' } })).status).toBe(
        403,
      );
      expect((await readOnly.app.request('/api/experiments/999', { headers })).status).toBe(404);
      expect(() => createViewApp({ db, studyDir: dir, token: 'short' })).toThrow(/at least 16 characters/);
      // A notebook this process may not write: every change refused up front with the reason, token or not.
      const unwritable = createViewApp({
        db,
        studyDir: dir,
        token,
        readOnlyNotebook: 'the notebook is not writable by this viewer',
      });
      try {
        const refused = await unwritable.app.request('/api/versions/1/activate', {
          method: 'POST',
          headers: { ...headers, Authorization: `Bearer ${token}` },
          body,
        });
        expect(refused.status).toBe(403);
        expect(await refused.json()).toEqual({
          error: 'read_only',
          message: 'the notebook is not writable by this viewer',
        });
        expect(await (await unwritable.app.request('/api/study', { headers })).json()).toMatchObject({
          writable: false,
          readOnly: 'the notebook is not writable by this viewer',
          activeVersion: 2,
        });
      } finally {
        unwritable.close();
      }
    } finally {
      readOnly.close();
      guarded.close();
      await db.destroy();
    }
  });

  it('kloop view refuses a short token, an unset token variable it was told to read, and a port in use', async () => {
    process.env.KLOOP_VIEW_TOKEN_TEST = 'short';
    try {
      const short = await kloop('view', dir, '--token-env', 'KLOOP_VIEW_TOKEN_TEST', '--port', '0');
      expect(short.code).toBe(2);
      expect(short.stderr).toContain('too short');
    } finally {
      delete process.env.KLOOP_VIEW_TOKEN_TEST;
    }
    const unset = await kloop('view', dir, '--token-env', 'KLOOP_VIEW_TOKEN_TEST', '--port', '0');
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('refusing to start without a bearer token');

    // A port another program holds: bad usage naming --port (exit 2), not an unexpected failure.
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((holder.address() as net.AddressInfo).port);
      const busy = await kloop('view', dir, '--port', port, '--quiet', '--json');
      expect(busy.code).toBe(2);
      expect(JSON.parse(busy.stdout)).toMatchObject({
        error: {
          code: 'input.port_in_use',
          field: '--port',
          message: expect.stringContaining(`port ${port} is in use`),
        },
      });
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});

describe('scores across corpus moves', () => {
  it(
    'an experiment that did not consult shadow is scored on the shadow membership in force between the same moves',
    async () => {
      const study = mkdtempSync(path.join(tmpdir(), 'kloop-view-moves-'));
      try {
        cpSync(path.join(repo, 'examples', 'intent'), study, {
          recursive: true,
          filter: (source) => !source.includes('.kloop'),
        });
        const config = readFileSync(path.join(study, 'kloop.yaml'), 'utf8')
          .replace(/maxExperiments: \d+/, 'maxExperiments: 16')
          .replace(/graduateAfterDecisions: \d+/, 'graduateAfterDecisions: 4');
        writeFileSync(path.join(study, 'kloop.yaml'), config);
        const ran = await kloop('run', study, '--json', '--quiet');
        expect(ran.code, ran.stderr).toBe(0);
        const report = JSON.parse(ran.stdout) as { best: Record<string, number>; bestVersion: number };
        const json = JSON.parse((await kloop('report', study, '--format', 'json')).stdout) as {
          overview: { corpusMoves: Array<{ afterExperiment: number; kinds: Record<string, number> }> };
          experiments: Array<{
            id: number;
            baseVersion: number;
            decision: string;
            acceptedVersion: number | null;
            shadowConsulted: boolean;
            incumbentBefore: Record<string, number | null>;
            incumbentAfter: Record<string, number | null>;
          }>;
        };
        const moves = json.overview.corpusMoves;
        expect(moves.length).toBeGreaterThan(0);
        expect(moves.every((move) => (move.kinds.graduated ?? 0) > 0)).toBe(true);
        // After the last move, the incumbent of every experiment whose incumbent is the run's best scores as the final report does.
        const lastMove = moves.at(-1)!.afterExperiment;
        const after = json.experiments.filter(
          (experiment) => experiment.id > lastMove && experiment.baseVersion === report.bestVersion,
        );
        expect(after.some((experiment) => !experiment.shadowConsulted)).toBe(true);
        for (const experiment of after) expect(experiment.incumbentBefore).toEqual(report.best);
        // The same study as a notebook of the earlier store: shadows not consulted take the membership between the same moves.
        await expectLegacyReadsTheSame(study);
      } finally {
        rmSync(study, { recursive: true, force: true });
      }
    },
    SLOW_MS,
  );
});
