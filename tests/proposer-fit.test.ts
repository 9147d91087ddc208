/**
 * Issue #35, item 3: "Fail before paying, with the right words." The study a
 * new user had: `kloop init --task custom --executor command`, whose
 * rules.json they replaced with their extractor's regex rules. The offline
 * (error-driven keyword-rules) proposer cannot read that file. Before,
 * `kloop doctor` said healthy, and `kloop run` failed five times with
 * `invalid_incumbent`, each "retried with a fresh sample", under a message
 * naming `rules.yaml`, the cause only in `kloop history`.
 *
 * Now: the doctor finds `setup.proposer` (a problem naming rules.json and the
 * proposer that fits), `kloop run` refuses before anything runs (exit 2,
 * naming rules.json, never rules.yaml), and a proposer that cannot read its
 * incumbent inside the loop (the library's own proposer) is asked once, not
 * retried as a fresh sample.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudy } from '../src/api/create-study.ts';
import { kloop } from './cli-in-process.ts';

/** Regex extraction rules: JSON, but not kloop's routing-rules format. */
const EXTRACTION_RULES = `${JSON.stringify({ fields: { total: ['^Total:\\s*(.+)$'], vendor: ['^From:\\s*(.+)$'] } }, null, 2)}\n`;

let root: string;
let study: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'kloop-proposer-fit-'));
  study = path.join(root, 'invoices');
  expect((await kloop('init', study, '--task', 'custom', '--executor', 'command')).code).toBe(0);
  writeFileSync(path.join(study, 'rules.json'), EXTRACTION_RULES);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a proposer that cannot read the artifact is found before anything is paid for (issue #35, item 3)', () => {
  it('kloop doctor: setup.proposer is a problem naming rules.json, and the proposers that fit', async () => {
    const result = await kloop('doctor', study, '--json');
    const report = JSON.parse(result.stdout) as {
      healthy: boolean;
      findings: Array<{ id: string; status: string; message: string; fix?: string }>;
    };
    expect(report.healthy).toBe(false);
    expect(result.code).toBe(1);
    const finding = report.findings.find((item) => item.id === 'setup.proposer')!;
    expect(finding.status).toBe('problem');
    expect(finding.message).toMatch(
      /^the error-driven proposer edits routing-rules files \(default, rules of any\/all\/none terms\) and cannot read rules\.json: rules\.json/,
    );
    expect(finding.message).not.toContain('rules.yaml');
    expect(finding.fix).toContain('use proposer.kind: reflective — an LLM that edits rules.json by its top-level keys');
    expect(finding.fix).toContain('proposer.kind: search with a proposer.space (docs/search.md)');
    // The instrument is still tested: the program reads the rules it was given (its own format is the user's business).
    expect(report.findings.some((item) => item.id === 'setup.instrument')).toBe(true);
  });

  it('kloop doctor: the seed kloop init wrote (a routing-rules file) is readable', async () => {
    const fresh = path.join(root, 'fresh');
    expect((await kloop('init', fresh, '--task', 'custom', '--executor', 'command')).code).toBe(0);
    const report = JSON.parse((await kloop('doctor', fresh, '--json')).stdout) as {
      findings: Array<{ id: string; status: string; message: string }>;
    };
    expect(report.findings.find((item) => item.id === 'setup.proposer')).toEqual({
      id: 'setup.proposer',
      area: 'setup',
      status: 'ok',
      message: 'the error-driven proposer reads rules.json',
    });
  });

  it('kloop run: refused before the baseline (exit 2), naming rules.json and the fix; no proposal recorded', async () => {
    const result = await kloop('run', study, '--json');
    expect(result.code).toBe(2);
    const error = (JSON.parse(result.stdout) as { error: { code: string; field: string; message: string } }).error;
    expect(error).toMatchObject({ code: 'input.proposer', field: 'proposer.kind' });
    expect(result.stderr).toContain(
      `${path.join(study, 'rules.json')}: proposer.kind: the error-driven proposer edits routing-rules files`,
    );
    expect(result.stderr).toContain('nothing was run. Fix: use proposer.kind: reflective');
    expect(result.stderr).not.toContain('rules.yaml');
    expect(result.stderr).not.toContain('round 1');
    const history = JSON.parse((await kloop('history', study, '--json')).stdout) as {
      runs: unknown[];
      proposalFailures: unknown[];
    };
    expect(history.runs).toEqual([]);
    expect(history.proposalFailures).toEqual([]);
  });

  it('with the reflective proposer on the same rules.json, the check passes (the run then needs its model, not a fix)', async () => {
    const reflective = path.join(root, 'reflective');
    expect((await kloop('init', reflective, '--task', 'custom', '--executor', 'command')).code).toBe(0);
    writeFileSync(path.join(reflective, 'rules.json'), EXTRACTION_RULES);
    const config = path.join(reflective, 'kloop.yaml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8')
        .replace(
          /^ {2}kind: error-driven.*$/m,
          '  kind: reflective\n  model: openai-compatible:local\n  baseURL: http://127.0.0.1:9/v1',
        )
        .replace(/^ {2}maxEvaluations: .*$/m, ''),
    );
    const report = JSON.parse((await kloop('doctor', reflective, '--json')).stdout) as {
      findings: Array<{ id: string; status: string; message: string }>;
    };
    expect(report.findings.find((item) => item.id === 'setup.proposer')).toMatchObject({
      status: 'ok',
      message: 'the reflective proposer reads rules.json',
    });
  });

  it('inside the loop, a proposer that cannot read the incumbent is asked once and the run stops saying so, not retried as a fresh sample', async () => {
    let calls = 0;
    const library = await createStudy({
      storage: path.join(root, 'library'),
      artifact: 'threshold: 3\n',
      examples: ['a', 'b', 'c', 'd', 'e', 'f'].map((id, index) => ({
        id,
        input: id,
        expected: 'x',
        partition: index < 2 ? 'optimization' : index < 4 ? 'anchor' : 'shadow',
      })),
      score: (output, expected) => output === expected,
      outcome: 'binary',
      execute: () => 'x',
      proposer: () => {
        calls += 1;
        return {
          candidates: [],
          failures: [{ code: 'invalid_incumbent', reason: 'cannot read the incumbent as a rules file' }],
        };
      },
      stopping: { maxConsecutiveFailures: 5 },
    });
    try {
      const outcome = await library.optimize();
      expect(calls).toBe(1);
      expect(outcome.stopReason).toBe('consecutive_failures');
      expect(outcome.stopDetail).toBe(
        'the proposer cannot read the incumbent artifact, the same failure on every attempt (not retried): cannot read the incumbent as a rules file',
      );
    } finally {
      await library.close();
    }
  });
});
