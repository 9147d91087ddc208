/**
 * Runs `examples/intent-llm` as a user would — `kloop run --calibrate` with
 * the shipped gate, proposer and corpus, `--model openai-compatible:sim
 * --base-url <loopback>` — against the simulated world of
 * `simulated-llm-world.ts`, and measures what the whole loop kept.
 *
 * Only the stopping block is the experiment's: a budget of `proposals`
 * evaluated candidates (`maxExperiments`), no round limit, plateau after 3
 * rounds; and the study seed.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadStudy } from '../src/study/load-study.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import type { HintKind, SimulatedWorld, WorldOptions } from './simulated-llm-world.ts';
import { startSimulatedWorld } from './simulated-llm-world.ts';
import { kloop } from './cli-in-process.ts';

const EXAMPLES = path.resolve(import.meta.dirname, '../examples');

export interface LoopWorldRun {
  seed: number;
  exitCode: number;
  stopReason: string;
  /** Evaluated candidates (decided by the gate). */
  evaluated: number;
  /** Distinct hints of each kind offered (proposed at least once), and accepted. */
  offered: Record<HintKind, number>;
  accepted: Record<HintKind, number>;
  precision: number;
  recall: number;
  /** Accepted experiments whose delta carries no known hint (e.g. from a malformed answer). */
  acceptedUnknown: number;
  malformedAnswers: number;
  proposalFailures: number;
  rebasedDecisions: number;
  executorCalls: number;
  proposerCalls: number;
  /** Model calls (executor + proposer) per accepted good change. */
  callsPerAcceptedGood: number;
  report: Record<string, unknown>;
  stderr: string;
}

const KINDS: readonly HintKind[] = ['good', 'neutral', 'harmful', 'overfit'];

/** Copies `examples/intent-llm` (and the corpus it points at) to a temporary folder. */
export function copyLlmStudy(stopping: string, seed: number): { dir: string; cleanup: () => void } {
  const root = mkdtempSync(path.join(tmpdir(), 'kloop-llm-world-'));
  cpSync(path.join(EXAMPLES, 'intent-llm'), path.join(root, 'intent-llm'), { recursive: true, filter: (source) => !source.includes(`${path.sep}.kloop`) });
  cpSync(path.join(EXAMPLES, 'intent', 'corpus'), path.join(root, 'intent', 'corpus'), { recursive: true });
  const file = path.join(root, 'intent-llm', 'kloop.yaml');
  const config = readFileSync(file, 'utf8')
    .replace(/^stopping:\n(?: {2}.*\n)+/m, `stopping:\n${stopping}\n`)
    .replace(/^seed: \d+$/m, `seed: ${seed}`);
  writeFileSync(file, config);
  return { dir: path.join(root, 'intent-llm'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * One run of the loop against a fresh world.
 *
 * @param proposals the budget of evaluated candidates
 */
export async function runLoopWorld(seed: number, proposals: number, world: Partial<WorldOptions> = {}, extraArgs: string[] = []): Promise<LoopWorldRun> {
  const study = copyLlmStudy(`  maxExperiments: ${proposals}\n  plateauRounds: 3\n  maxConsecutiveFailures: 3\n  maxCostUsd: 5`, seed);
  let simulated: SimulatedWorld | undefined;
  try {
    const loaded = loadStudy(study.dir, { createExecutor: () => ({ id: 'probe', deterministic: false, execute: async () => ({ ok: false, reason: 'error', message: 'probe' }) }), createProposer: () => ({ id: 'probe', propose: async () => ({ candidates: [], failures: [] }) }), sectionsOf: () => ({}) });
    simulated = await startSimulatedWorld({ seed, examples: loaded.corpus, ...world });
    const result = await kloop('run', study.dir, '--calibrate', '--json', '--model', 'openai-compatible:sim', '--base-url', simulated.server.baseURL, ...extraArgs);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    const db = await openDatabase(studyDatabasePath(study.dir), { readonly: true });
    try {
      const rows = await db.selectFrom('experiments').select(['delta', 'decision', 'reason', 'evidence']).orderBy('id').execute();
      const offered = new Map<HintKind, Set<string>>(KINDS.map((kind) => [kind, new Set()]));
      const accepted = new Map<HintKind, Set<string>>(KINDS.map((kind) => [kind, new Set()]));
      let acceptedUnknown = 0;
      let rebasedDecisions = 0;
      for (const row of rows) {
        const hint = simulated.hintIn(row.delta);
        if ((JSON.parse(row.evidence) as { rebased?: unknown }).rebased !== undefined) rebasedDecisions += 1;
        if (hint === undefined) {
          if (row.decision === 'accepted') acceptedUnknown += 1;
          continue;
        }
        offered.get(hint.kind)!.add(hint.id);
        if (row.decision === 'accepted') accepted.get(hint.kind)!.add(hint.id);
      }
      const failures = await db.selectFrom('proposals').select('outcome').where('outcome', '=', 'failed').execute();
      const count = (map: Map<HintKind, Set<string>>): Record<HintKind, number> => Object.fromEntries(KINDS.map((kind) => [kind, map.get(kind)!.size])) as Record<HintKind, number>;
      const acceptedCounts = count(accepted);
      const offeredCounts = count(offered);
      const acceptedTotal = KINDS.reduce((sum, kind) => sum + acceptedCounts[kind], 0) + acceptedUnknown;
      const calls = simulated.executorCalls + simulated.proposerCalls;
      return {
        seed,
        exitCode: result.code,
        stopReason: String(report['stopReason']),
        evaluated: rows.filter((row) => row.decision !== 'skipped').length,
        offered: offeredCounts,
        accepted: acceptedCounts,
        precision: acceptedTotal === 0 ? 1 : acceptedCounts.good / acceptedTotal,
        recall: offeredCounts.good === 0 ? 1 : acceptedCounts.good / offeredCounts.good,
        acceptedUnknown,
        malformedAnswers: simulated.malformedAnswers,
        proposalFailures: failures.length,
        rebasedDecisions,
        executorCalls: simulated.executorCalls,
        proposerCalls: simulated.proposerCalls,
        callsPerAcceptedGood: acceptedCounts.good === 0 ? Number.POSITIVE_INFINITY : calls / acceptedCounts.good,
        report,
        stderr: result.stderr,
      };
    } finally {
      await db.destroy();
    }
  } finally {
    await simulated?.close();
    study.cleanup();
  }
}
