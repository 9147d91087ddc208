/**
 * The incumbent's evaluation in the engine: its repeats (topped up for each
 * round it has served) and its scores, every example-repeat evaluated. An
 * incumbent the loop cannot evaluate stops the run.
 *
 * @module
 */
import type { PartitionName } from '../corpus/example.ts';
import { InfrastructureError, InputError } from '../errors.ts';
import { scorerErrors } from '../evaluator/evaluator.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import { withCallStage } from '../providers/call-stage.ts';
import type { EngineRun } from './engine-state.ts';
import { incumbentRepeats } from './evaluate-partition.ts';
import { adaptiveRepeatsOn, evaluateIncumbentPartition, referencesOf } from './adaptive-evaluation.ts';
import { acceptedInRound } from './notebook.ts';

/** An incumbent the loop cannot evaluate (transient failures that persist): the run stops. */
class IncumbentUnavailable extends InfrastructureError {}

/** The incumbent's repeats in `round`: topped up for each round it has served. */
export async function repeatsOfIncumbent(run: EngineRun, round: number): Promise<number> {
  return incumbentRepeats(run.study, round - 1 - (await acceptedInRound(run.notebook, run.incumbent.id)));
}

/** The incumbent's noise-free reference values on optimization and anchor in `round` (empty when adaptive repeats are off). */
export async function candidateReferences(
  run: EngineRun,
  round: number,
): Promise<{ optimization: Map<string, number>; anchor: Map<string, number> }> {
  if (!adaptiveRepeatsOn(run.study, run.calibration)) return { optimization: new Map(), anchor: new Map() };
  const repeats = await repeatsOfIncumbent(run, round);
  return {
    optimization: referencesOf(run.study, run.calibration, await evaluateIncumbent(run, 'optimization', repeats)),
    anchor: referencesOf(run.study, run.calibration, await evaluateIncumbent(run, 'anchor', repeats)),
  };
}

/**
 * The incumbent on a partition, with every example-repeat evaluated: transient failures are
 * tried once more (they were not stored); if they persist, the run cannot judge anything.
 */
export function evaluateIncumbent(run: EngineRun, partition: PartitionName, repeats: number): Promise<PartitionScore> {
  return withCallStage('incumbent', async () => {
    const evaluate = (): Promise<PartitionScore> =>
      evaluateIncumbentPartition(run.evaluator, run.study, run.calibration, {
        text: run.incumbent.text,
        partition,
        repeats,
        signal: run.options.signal,
      });
    let score = await evaluate();
    if (score.transient > 0) score = await evaluate();
    if (score.transient > 0) {
      const message = score.examples.find((record) => !record.valid && record.transient === true);
      throw new IncumbentUnavailable(
        `the incumbent (version ${run.incumbent.id}) cannot be evaluated on the ${partition} partition: ${score.transient} of ${score.total} example-repeats failed twice in the infrastructure${message !== undefined && !message.valid ? ` (${message.message})` : ''}`,
      );
    }
    const [scorerError] = scorerErrors([score]);
    if (scorerError !== undefined) {
      // The scorer fails on the incumbent's own output: no candidate can be judged against it. A bug to fix, not a result.
      throw new InputError(
        `the scorer failed on the incumbent's (version ${run.incumbent.id}) output on the ${partition} partition, so no candidate can be judged: ${scorerError}; fix the scorer (check it ${checkAdvice(run, 'score')})`,
        {
          code: 'custom_scorer',
        },
      );
    }
    if (partition === 'optimization' && score.total > 0 && score.invalid === score.total) {
      // Every comparison is on examples valid for both sides: with none valid for the incumbent
      // nothing can be measured, so no candidate could ever be judged (a crashing or hanging program,
      // an executor that answers nothing parseable). A problem, not a result.
      const first = score.examples.find((record) => !record.valid);
      throw new IncumbentUnavailable(
        `the incumbent (version ${run.incumbent.id}) gave no valid output on any of the ${score.total} optimization example-repeats, so nothing can be measured${first !== undefined && !first.valid ? ` (${first.exampleId}: ${first.invalidReason}: ${first.message})` : ''}; check the executor ${checkAdvice(run, 'execute')}`,
      );
    }
    return score;
  });
}

// What checks an executor or scorer: `kloop eval` for a study folder; a library study has no kloop.yaml for it to read.
function checkAdvice(run: EngineRun, what: 'score' | 'execute'): string {
  return run.study.config !== undefined
    ? 'with `kloop eval`'
    : `by calling your ${what} function on that example yourself (\`kloop eval\` needs a kloop.yaml, which a library study has not; \`kloop history ${run.study.dir}\` reads this study's notebook)`;
}
