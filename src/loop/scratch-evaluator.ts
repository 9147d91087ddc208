/**
 * The evaluator of the proposer's screening (the candidates it scores before
 * the gate: hundreds per round with the error-driven proposer's default).
 *
 * In one process it stores nothing (a study database is not given to it).
 * With evaluation workers (`kloop run --workers`) the screening goes to the
 * workers too — it is most of a study's executor calls (peer fault 15: 961 of
 * the first 1,251 calls of a slow study ran in the coordinator, so 4 workers
 * reached only 2.1–2.6× a single process). Workers hand results back through
 * the notebook's `example_results`, so the screening's results are written
 * under a scratch key (`scratch:<fingerprint>`, never read by the gate,
 * `kloop report` or a later run) and removed as soon as the screening has
 * read them; rows a killed coordinator left are removed at the first
 * screening of the next run. The notebook is then the one a single-process
 * run leaves.
 */
import { contentHash } from '../artifact/content-hash.ts';
import type { Evaluator } from '../evaluator/evaluator.ts';
import type { Notebook } from '../storage/notebook/index.ts';
import type { LoadedStudy } from './loaded-study.ts';
import type { StudyEvaluatorOptions } from './evaluate-partition.ts';
import { createStudyEvaluator } from './evaluate-partition.ts';

/** Prefix of the scratch key the screening's results are stored under while workers produce them. */
export const SCRATCH_PREFIX = 'scratch:';

/** The scratch key of an evaluator fingerprint. */
export function scratchKey(fingerprint: string): string {
  return `${SCRATCH_PREFIX}${fingerprint}`;
}

/**
 * The screening's evaluator: unstored and in this process, or — with
 * `options.remote` — on the evaluation workers under the scratch key (see the
 * module comment).
 */
export function createScratchEvaluator(
  study: LoadedStudy,
  notebook: Notebook,
  options: StudyEvaluatorOptions = {},
): Evaluator {
  const local = createStudyEvaluator(study);
  if (options.remote === undefined) return local;
  const storedAs = scratchKey(local.fingerprint);
  const remote = createStudyEvaluator(study, notebook, {
    remote: options.remote,
    storedAs,
    ...(options.readSince !== undefined ? { readSince: options.readSince } : {}),
  });
  let leftovers: Promise<unknown> | undefined;
  return {
    fingerprint: remote.fingerprint,
    task: remote.task,
    executor: remote.executor,
    weights: remote.weights,
    async evaluate(request) {
      // A read first: most runs have none to remove, and need not wait for the table's write lock.
      leftovers ??= notebook
        .hasResultsUnderPrefix(SCRATCH_PREFIX)
        .then((found) => (found ? notebook.deleteResultsUnderPrefix(SCRATCH_PREFIX) : undefined));
      await leftovers;
      try {
        return await remote.evaluate(request);
      } finally {
        await notebook.deleteArtifactResults(storedAs, contentHash(request.artifactText));
      }
    },
  };
}
