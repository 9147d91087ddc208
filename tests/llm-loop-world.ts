/**
 * Runs `examples/intent-llm` as a user would — `kloop run --calibrate` with
 * the shipped gate, proposer and corpus, `--model openai-compatible:sim
 * --base-url <loopback>` — against the simulated world of
 * `simulated-llm-world.ts`, and measures what the whole loop kept.
 *
 * Only the budget is the experiment's: `proposals` evaluated candidates
 * (`stopping.maxExperiments`), no round limit (`maxRounds` removed) and a
 * plateau of 3 rounds (shipped: 2), so that a run can spend the budget; every
 * other setting — gate, repeats, candidates per round, concurrency,
 * `maxConsecutiveFailures`, the cost cap — is the shipped one. And the study
 * seed.
 */
import { asIntentExamples } from '../src/corpus/intent-example.ts';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadStudy } from '../src/study/load-study.ts';
import { markdownSections } from '../src/artifact/markdown-sections.ts';
import { openDatabase, studyDatabasePath } from '../src/storage/database.ts';
import { getRegistryVersion } from '../src/storage/registry.ts';
import type { HintKind, SimulatedWorld, WorldOptions } from './simulated-llm-world.ts';
import { startSimulatedWorld } from './simulated-llm-world.ts';
import { runKloop } from './reliability-fixture.ts';

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
  /** Good hints the world holds (offered or not). */
  goodInWorld: number;
  /** Accepted good hints / good hints in the world. */
  recallOfWorld: number;
  /** Share of the budget of evaluated candidates left when the run stopped (0 = spent). */
  budgetUnspent: number;
  /**
   * The run's model calls by the stage they were made for, as kloop's usage
   * meter counted them where they were made (`usage.callsByStage` of the
   * run's report: src/providers/call-stage.ts). Empty when the report has none.
   */
  callsByStage: Record<string, number>;
  /** The active prompt at the end of the run. */
  finalPrompt: string;
  /** Model calls the meter counted (cache hits excluded): equals executor + proposer calls when the accounting is whole. */
  meteredCalls: number;
  /** Decisions refused for futility by the race (optimization or shadow). */
  futilityStops: number;
  /** Every experiment: the hint it carried, its decision and reason. */
  decisions: Array<{
    round: number;
    hint: string;
    decision: string;
    reason: string;
    rebased: boolean;
    checks: Array<{ name: string; passed: boolean; statistic?: number; threshold?: number; detail?: string }>;
  }>;
  report: Record<string, unknown>;
  stderr: string;
}

const KINDS: readonly HintKind[] = ['good', 'neutral', 'harmful', 'overfit'];

/** Settings of a world run beyond the budget: `racing: false` turns the shipped `gate.racing` off. */
export interface LoopWorldSettings {
  racing?: boolean;
  /** `proposer.concurrency` (candidates evaluated at once). Default the shipped 2. */
  concurrency?: number;
  /** Other `gate` settings replaced in kloop.yaml (each `  name: value` line of the gate block), e.g. `{ repeats: 3 }`. */
  gate?: Record<string, number>;
  /** Called with the study folder after the run, before it is removed (for inspection). */
  inspect?: (dir: string) => Promise<void>;
}

/** Copies `examples/intent-llm` (and the corpus it points at) to a temporary folder, with a budget of `proposals`. */
export function copyLlmStudy(
  proposals: number,
  seed: number,
  settings: LoopWorldSettings = {},
): { dir: string; cleanup: () => void } {
  const root = mkdtempSync(path.join(tmpdir(), 'kloop-llm-world-'));
  cpSync(path.join(EXAMPLES, 'intent-llm'), path.join(root, 'intent-llm'), {
    recursive: true,
    filter: (source) => !source.includes(`${path.sep}.kloop`),
  });
  cpSync(path.join(EXAMPLES, 'intent', 'corpus'), path.join(root, 'intent', 'corpus'), { recursive: true });
  const file = path.join(root, 'intent-llm', 'kloop.yaml');
  const config = readFileSync(file, 'utf8')
    .replace(/^( {2}maxExperiments:) \d+/m, `$1 ${proposals}`)
    .replace(/^( {2}plateauRounds:) \d+/m, '$1 3')
    .replace(/^ {2}maxRounds: .*\n/m, '')
    .replace(/^seed: \d+$/m, `seed: ${seed}`)
    .replace(/^ {2}racing:.*\n(?: {4}.*\n)*/m, (match) => (settings.racing === false ? '  racing: false\n' : match));
  if (settings.racing === false && !/^ {2}racing: false$/m.test(config))
    throw new Error('examples/intent-llm/kloop.yaml has no gate.racing block to turn off');
  let edited =
    settings.concurrency === undefined
      ? config
      : config.replace(/^( {2}concurrency:) \d+/m, `$1 ${settings.concurrency}`);
  for (const [name, value] of Object.entries(settings.gate ?? {})) {
    const line = new RegExp(`^( {2}${name}:) [^\\s#]+`, 'm');
    if (!line.test(edited)) throw new Error(`examples/intent-llm/kloop.yaml has no gate.${name} to replace`);
    edited = edited.replace(line, `$1 ${value}`);
  }
  writeFileSync(file, edited);
  return { dir: path.join(root, 'intent-llm'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * One run of the loop against a fresh world.
 *
 * @param proposals the budget of evaluated candidates
 */
export async function runLoopWorld(
  seed: number,
  proposals: number,
  world: Partial<WorldOptions> = {},
  extraArgs: string[] = [],
  settings: LoopWorldSettings = {},
): Promise<LoopWorldRun> {
  const study = copyLlmStudy(proposals, seed, settings);
  let simulated: SimulatedWorld | undefined;
  try {
    // Loaded once for its corpus only (the world's gold); no model is called.
    const loaded = loadStudy(study.dir, {
      createExecutor: () => ({
        id: 'probe',
        deterministic: false,
        execute: async () => ({ ok: false, reason: 'error', message: 'probe' }),
      }),
      createProposer: () => ({ id: 'probe', propose: async () => ({ candidates: [], failures: [] }) }),
      sectionsOf: markdownSections,
    });
    simulated = await startSimulatedWorld({ seed, examples: asIntentExamples(loaded.corpus), ...world });
    // The CLI in its own process, as a user runs it; the world answers over loopback.
    const result = await runKloop([
      'run',
      study.dir,
      '--calibrate',
      '--json',
      '--model',
      'openai-compatible:sim',
      '--base-url',
      simulated.server.baseURL,
      ...extraArgs,
    ]);
    const report = (result.stdout.trim() === '' ? {} : JSON.parse(result.stdout)) as Record<string, unknown>;
    const db = await openDatabase(studyDatabasePath(study.dir), { readonly: true });
    try {
      const rows = await db
        .selectFrom('experiments')
        .select(['round', 'delta', 'decision', 'reason', 'evidence'])
        .orderBy('id')
        .execute();
      const offered = new Map<HintKind, Set<string>>(KINDS.map((kind) => [kind, new Set()]));
      const accepted = new Map<HintKind, Set<string>>(KINDS.map((kind) => [kind, new Set()]));
      let acceptedUnknown = 0;
      let rebasedDecisions = 0;
      const decisions: LoopWorldRun['decisions'] = [];
      for (const row of rows) {
        const hint = simulated.hintIn(row.delta);
        const evidence = JSON.parse(row.evidence) as {
          rebased?: unknown;
          checks?: LoopWorldRun['decisions'][number]['checks'];
        };
        const rebased = evidence.rebased !== undefined;
        if (rebased) rebasedDecisions += 1;
        decisions.push({
          round: row.round,
          hint: hint?.id ?? '?',
          decision: row.decision,
          reason: row.reason,
          rebased,
          checks: evidence.checks ?? [],
        });
        if (hint === undefined) {
          if (row.decision === 'accepted') acceptedUnknown += 1;
          continue;
        }
        offered.get(hint.kind)!.add(hint.id);
        if (row.decision === 'accepted') accepted.get(hint.kind)!.add(hint.id);
      }
      const failures = await db.selectFrom('proposals').select('outcome').where('outcome', '=', 'failed').execute();
      const count = (map: Map<HintKind, Set<string>>): Record<HintKind, number> =>
        Object.fromEntries(KINDS.map((kind) => [kind, map.get(kind)!.size])) as Record<HintKind, number>;
      const acceptedCounts = count(accepted);
      const offeredCounts = count(offered);
      const acceptedTotal = KINDS.reduce((sum, kind) => sum + acceptedCounts[kind], 0) + acceptedUnknown;
      const calls = simulated.executorCalls + simulated.proposerCalls;
      const usage = (report.usage ?? {}) as { calls?: number; callsByStage?: Record<string, number> };
      const evaluated = rows.filter((row) => row.decision !== 'skipped').length;
      const goodInWorld = simulated.hints.filter((hint) => hint.kind === 'good').length;
      return {
        seed,
        exitCode: result.code ?? -1,
        stopReason: String(report.stopReason ?? `none (exit ${result.code})`),
        evaluated,
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
        goodInWorld,
        recallOfWorld: goodInWorld === 0 ? 1 : acceptedCounts.good / goodInWorld,
        budgetUnspent: Math.max(0, proposals - evaluated) / proposals,
        callsByStage: usage.callsByStage ?? {},
        meteredCalls: usage.calls ?? 0,
        finalPrompt: (await getRegistryVersion(db))?.text ?? '',
        futilityStops: rows.filter(
          (row) =>
            row.reason === 'futility' ||
            (row.reason === 'specialization' &&
              JSON.stringify(JSON.parse(row.evidence).checks ?? []).includes('stopped for futility')),
        ).length,
        decisions,
        report,
        stderr: result.stderr,
      };
    } finally {
      await db.destroy();
      await settings.inspect?.(study.dir);
    }
  } finally {
    await simulated?.close();
    study.cleanup();
  }
}
