/**
 * The search proposer (`proposer.kind: search`): proposes new values for the
 * parameters of a YAML or JSON artifact (hyper-parameters, prices,
 * thresholds) from a declared search space (`space.ts`), with a seeded
 * sampler (`tpe.ts`): random points first, then the TPE model of good and bad
 * regions. The gate decides each candidate as for any other proposer.
 *
 * What it learns from: the incumbent and its optimization score, and every
 * earlier experiment of the study that was evaluated (`context.history`: the
 * parameters in its delta, its candidate's optimization composite in
 * `optimizationScore`), accepted or refused. It never evaluates anything
 * itself: every evaluation is the gate's, so the evaluation budget is the
 * study's (`stopping.maxExperiments`).
 *
 * The Constraints register is obeyed: a parameter whose top-level section is
 * not in `editableSections` is refused before anything is proposed (code
 * `frozen_section`); a candidate longer than `maxArtifactCharacters`, or
 * tried before (`context.triedHashes`), or whose delta is closer than
 * `minDeltaDistance` to an earlier one, is drawn again (at most
 * {@link DRAWS_PER_CANDIDATE} draws per candidate). The gate checks the
 * constraints again.
 *
 * A candidate's delta lists every parameter, `path: value` (values as
 * JSON) joined by `; `, with `(was …)` after the changed ones: the history
 * is read back from it. A candidate rebased onto a newer incumbent (another
 * candidate of its round was accepted first) sets the same values there.
 *
 * @module
 */
import { contentHash } from '../../artifact/content-hash.ts';
import { bigramJaccardDistance } from '../../stats/bigram-jaccard-distance.ts';
import type {
  Candidate,
  HistoryEntry,
  ProposalContext,
  ProposalFailure,
  ProposalResult,
  Proposer,
} from '../proposer.ts';
import { INVALID_INCUMBENT } from '../proposer.ts';
import { formatOf, ParamsFileError, readParams, writeParams } from './params-file.ts';
import type { Params, SearchSpace } from './space.ts';
import { inDomain } from './space.ts';
import { DEFAULT_SAMPLER_SETTINGS, suggest, type SamplerSettings, type Trial } from './tpe.ts';

/** Implementation id, stored with each experiment. */
export const SEARCH_PROPOSER_ID = 'search@1';

/** Most draws spent on one candidate slot before the proposer gives up on it (the space is exhausted near the model's mode). */
export const DRAWS_PER_CANDIDATE = 50;

/** Settings of {@link createSearchProposer}. */
export interface SearchProposerOptions {
  space: SearchSpace;
  /** The artifact's file name, for its format (`.json` or YAML) and for messages. */
  artifactFile: string;
  /** Sampler settings; default {@link DEFAULT_SAMPLER_SETTINGS}. */
  sampler?: Partial<SamplerSettings>;
  /** The gate's `minDeltaDistance`: a draw whose delta is closer to an earlier one is drawn again. Default 0. */
  minDeltaDistance?: number;
}

const ENTRY = /^([A-Za-z0-9_.-]+): (.+?)(?: \(was .*\))?$/;
const SEPARATOR = '; ';

/** The delta of a candidate: every parameter, `path: value`, `(was …)` after the changed ones. */
export function describeParams(params: Params, incumbent: Params): string {
  return Object.entries(params)
    .map(
      ([path, value]) =>
        `${path}: ${JSON.stringify(value)}${value === incumbent[path] ? '' : ` (was ${JSON.stringify(incumbent[path])})`}`,
    )
    .join(SEPARATOR);
}

/** The parameters a delta of {@link describeParams} lists, or undefined when it does not list every parameter of the space in its domain. */
export function paramsOfDelta(delta: string, space: SearchSpace): Params | undefined {
  const params: Params = {};
  for (const entry of delta.split(SEPARATOR)) {
    const match = ENTRY.exec(entry.trim());
    if (match === null || !(match[1]! in space)) continue;
    try {
      params[match[1]!] = JSON.parse(match[2]!) as Params[string];
    } catch {
      return undefined;
    }
  }
  return Object.entries(space).every(([path, spec]) => inDomain(spec, params[path])) ? params : undefined;
}

/** Observations: the incumbent (when scored) and every earlier experiment with an optimization score and a readable delta. */
export function trialsOf(
  history: readonly HistoryEntry[],
  space: SearchSpace,
  incumbent: { params: Params; score: number | null },
): Trial[] {
  const trials: Trial[] = [];
  if (incumbent.score !== null && Object.entries(space).every(([path, spec]) => inDomain(spec, incumbent.params[path])))
    trials.push({ params: incumbent.params, score: incumbent.score });
  for (const entry of history) {
    if (entry.optimizationScore === undefined) continue;
    const params = paramsOfDelta(entry.delta, space);
    if (params !== undefined) trials.push({ params, score: entry.optimizationScore });
  }
  return trials;
}

function frozenParameters(space: SearchSpace, editableSections: readonly string[]): string[] {
  if (editableSections.length === 0) return [];
  return Object.keys(space).filter((path) => !editableSections.includes(path.split('.')[0]!));
}

function failure(code: string, reason: string): ProposalResult {
  return { candidates: [], failures: [{ code, scope: 'answer', reason } satisfies ProposalFailure] };
}

/** The search proposer (see the module comment). */
export function createSearchProposer(options: SearchProposerOptions): Proposer {
  const settings: SamplerSettings = { ...DEFAULT_SAMPLER_SETTINGS, ...options.sampler };
  const format = formatOf(options.artifactFile);
  const minDistance = options.minDeltaDistance ?? 0;
  return {
    id: settings.tpe ? SEARCH_PROPOSER_ID : `${SEARCH_PROPOSER_ID}:random`,
    async propose(context: ProposalContext): Promise<ProposalResult> {
      if (context.signal?.aborted === true) throw context.signal.reason;
      const frozen = frozenParameters(options.space, context.limits.editableSections);
      if (frozen.length > 0) {
        return failure(
          'frozen_section',
          `proposer.space names ${frozen.join(', ')}, outside the editable sections of program.md's Constraints (${context.limits.editableSections.join(', ')})`,
        );
      }
      let incumbent: Params;
      try {
        incumbent = readParams(context.incumbentText, options.space, options.artifactFile, format);
      } catch (error) {
        if (error instanceof ParamsFileError) return failure(INVALID_INCUMBENT, error.message);
        throw error;
      }
      const trials = trialsOf(context.history, options.space, {
        params: incumbent,
        score: context.incumbentScores.composite,
      });
      const past = context.history.map((entry) => entry.delta);
      const candidates: Candidate[] = [];
      const seen = new Set<string>([contentHash(context.incumbentText)]);
      let repeats = 0;
      const pending: Params[] = [];
      const worst = trials.length > 0 ? Math.min(...trials.map((trial) => trial.score)) : 0;
      for (let slot = 0; slot < context.maxCandidates; slot += 1) {
        for (let draw = 0; draw < DRAWS_PER_CANDIDATE; draw += 1) {
          // Constant liar (Optuna's `constant_liar`): the round's earlier candidates count as the worst point seen, so the next one looks elsewhere.
          const params = suggest(
            options.space,
            [...trials, ...pending.map((pendingParams) => ({ params: pendingParams, score: worst }))],
            context.random,
            settings,
          );
          const text = writeParams(context.incumbentText, params, format);
          const hash = contentHash(text);
          const delta = describeParams(params, incumbent);
          if (context.triedHashes.has(hash)) repeats += 1;
          if (seen.has(hash) || context.triedHashes.has(hash) || text.length > context.limits.maxArtifactCharacters)
            continue;
          if (
            minDistance > 0 &&
            [...past, ...candidates.map((candidate) => candidate.delta)].some(
              (other) => bigramJaccardDistance(other, delta) < minDistance,
            )
          )
            continue;
          seen.add(hash);
          const modelled = settings.tpe && trials.length + pending.length >= Math.max(1, settings.startupTrials);
          const rationale = modelled
            ? `TPE: the values with the largest l(x)/g(x) among ${settings.candidates} draws from the best ${Math.max(1, Math.ceil(settings.gamma * (trials.length + pending.length)))} of ${trials.length} scored points${pending.length > 0 ? ` and this round's ${pending.length} earlier candidates (counted as the worst)` : ''}`
            : `random start: ${trials.length} of ${settings.startupTrials} scored points before the TPE model is used${settings.tpe ? '' : ' (TPE off: random search)'}`;
          const rebase = (incumbentText: string): string | null => {
            try {
              const rebased = writeParams(incumbentText, params, format);
              return rebased === incumbentText ? null : rebased;
            } catch {
              return null;
            }
          };
          candidates.push({ text, delta, rationale, rebase });
          pending.push(params);
          break;
        }
      }
      return { candidates, failures: [], repeats };
    },
  };
}
