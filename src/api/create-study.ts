/**
 * The library API: a study for people who bring code rather than YAML.
 *
 * `createStudy` builds the same study the CLI loads from a folder — the same
 * notebook (`<storage>/.kloop/`), evaluator, gate, corpus lifecycle and
 * reports — from values in code: the seed artifact, the labelled examples, a
 * task (or just a `score` function), an `execute` function and a proposer.
 * `kloop history <storage>`, `kloop report`, `kloop view` read what it
 * records.
 *
 * Two ways to drive it:
 *
 * - `await study.optimize()`: the loop of `kloop run`, until a stopping
 *   criterion holds;
 * - the primitives, as Optuna's ask-and-tell interface (Akiba et al. 2019,
 *   "Optuna: A Next-generation Hyperparameter Optimization Framework", KDD):
 *   `const candidates = await study.ask()` proposes (recorded, near-duplicates
 *   skipped), then `await study.tell(candidate)` evaluates one candidate with
 *   the frozen evaluator and lets the gate decide. `tell(candidate, results)`
 *   takes outputs the caller produced for that candidate's artifact itself
 *   (e.g. on other machines); kloop still scores them — a caller never hands
 *   in a score.
 *
 * @example
 * ```js
 * import { createStudy } from 'kloop';
 * const study = await createStudy({
 *   storage: './my-study',
 *   artifact: 'positive words: good, great\n',
 *   examples: [{ id: 'r1', input: 'A great phone', expected: 'positive', partition: 'optimization' }, ...],
 *   score: (output, expected) => ({ score: output === expected ? 1 : 0, reason: `expected ${expected}` }),
 *   outcome: 'binary',
 *   execute: (artifact, input) => classify(artifact, input),
 *   proposer: async ({ incumbentText, incumbentScores }) => [{ text: incumbentText + 'positive words: superb\n', rationale: '...' }],
 * });
 * const result = await study.optimize();
 * await study.close();
 * ```
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import { contentHash } from '../artifact/content-hash.ts';
import { createExampleFormat } from '../corpus/example-format.ts';
import type { Example, PartitionName } from '../corpus/example.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { InputError } from '../errors.ts';
import type { PartitionScore } from '../evaluator/partition-score.ts';
import type { ExecutionResult, Executor } from '../executors/executor.ts';
import { createLoopEngine, ensureSeedVersion, type LoopEngine, type Told } from '../loop/engine.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import type { ScreenedCandidate } from '../loop/integrate.ts';
import { runStudy, type RunOutcome } from '../loop/run-study.ts';
import { checkConstraints, parseProgram } from '../program/program.ts';
import { checkStudyOptions } from './study-options.ts';
import type { Candidate } from '../proposers/proposer.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { openDatabase, studyDatabasePath } from '../storage/database.ts';
import type { LeaseHeartbeat, LeaseRecord } from '../storage/lease.ts';
import { createNotebookFolder } from '../storage/notebook-folder.ts';
import { acquireLease, releaseLease, startLeaseHeartbeat } from '../storage/lease.ts';
import { studyConfigSchema } from '../config/config.ts';
import type { LoadedStudy } from '../loop/loaded-study.ts';
import { composeStudySettings } from '../study/study-settings.ts';
import { DEFAULT_PROGRAM, hashOf, listenerOf, proposerOf, taskOf, untilAborted } from './code-adapters.ts';
import type { CreateStudyOptions, Study, StudyBest } from './study-types.ts';

export type {
  CreateStudyOptions,
  ExecuteContext,
  ExecuteFunction,
  OptimizeResult,
  ProposedCandidate,
  ProposeFunction,
  ScoreFunction,
  Study,
  StudyBest,
  StudyExample,
} from './study-types.ts';

/**
 * Builds (or reopens) a study from values in code and takes its lease (one
 * writer per study, as `kloop run`).
 *
 * @throws InputError (with the field) for an example that does not fit the
 *   task's schemas, a partition with no example, a bad gate or stopping key, an unknown weight
 *   or weights all 0, `gate.requireCalibration` in force (set, or by default for
 *   `deterministic: false`) without a `calibration`
 * @throws StudyBusyError when another process runs the study
 */
export async function createStudy<Input = unknown, Expected = unknown, Output = unknown>(
  options: CreateStudyOptions<Input, Expected, Output>,
): Promise<Study> {
  checkStudyOptions(options);
  const task = taskOf(options);
  const format = createExampleFormat(task, 'input');
  const examples: Example[] = options.examples.map((record, index) => {
    const parsed = format.parse({
      id: record.id,
      input: record.input,
      expected: record.expected,
      tags: record.tags ?? [],
      partition: record.partition,
    });
    if (!parsed.success) {
      const issue = parsed.issues[0]!;
      throw new InputError(issue.message, {
        field: `examples[${index}]${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}`,
      });
    }
    return parsed.example;
  });
  if (new Set(examples.map((example) => example.id)).size !== examples.length)
    throw new InputError('example ids must be unique', { field: 'examples' });
  const partitions = Object.fromEntries(
    PARTITIONS.map((name) => [name, examples.filter((example) => example.partition === name)]),
  ) as Record<PartitionName, Example[]>;
  for (const name of PARTITIONS)
    if (partitions[name].length === 0)
      throw new InputError(`no example in the ${name} partition`, { field: 'examples' });

  const configShape = studyConfigSchema.shape;
  const parse = <T>(
    schema: {
      safeParse(
        value: unknown,
      ):
        | { success: true; data: T }
        | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } };
    },
    value: unknown,
    field: string,
  ): T => {
    const parsed = schema.safeParse(value ?? {});
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    throw new InputError(issue.message, { field: [field, ...issue.path.map(String)].join('.') });
  };
  const deterministic = options.deterministic ?? true;
  // The same builder as `kloop run`'s (src/study/study-settings.ts): the same defaults.
  const settings = composeStudySettings({
    task,
    deterministic,
    gate: parse(configShape.gate, options.gate, 'gate'),
    stopping: parse(configShape.stopping, options.stopping, 'stopping'),
    weights: options.weights,
    candidatesPerRound: options.candidatesPerRound,
    concurrency: options.concurrency,
    seed: options.seed,
  });
  if (settings.gate.requireCalibration && options.calibration === undefined) {
    // A setting in force is honoured: the library does not calibrate, so the calibration must come in.
    const why =
      options.gate?.requireCalibration === true
        ? 'gate.requireCalibration is true'
        : 'gate.requireCalibration is true by default for an executor that is not deterministic (deterministic: false), as in kloop run';
    throw new InputError(
      `${why}, but no calibration was given: pass calibration: { noiseSd, exampleSds } (as \`kloop calibrate\` measures them), or set gate: { requireCalibration: false } to run with τ = 0 (no noise allowance)`,
      {
        field: 'gate.requireCalibration',
      },
    );
  }
  const program = parseProgram(options.program ?? DEFAULT_PROGRAM, 'program');
  const sectionsOf = options.sectionsOf ?? (() => ({}));
  // As for a CLI study: an editable section the artifact does not have would freeze everything, silently.
  const sections = sectionsOf(options.artifact);
  if (typeof sections !== 'object' || sections === null)
    throw new InputError('sectionsOf must return an object of sections by name', { field: 'sectionsOf' });
  for (const [index, name] of (program.mechanical.editableSections ?? []).entries()) {
    if (Object.hasOwn(sections, name)) continue;
    const hint =
      options.sectionsOf === undefined
        ? ': give sectionsOf (text → { name: section text }) for program.md to name sections, or leave editableSections out'
        : '';
    throw new InputError(
      `"${name}" is no section of the artifact (its sections: ${Object.keys(sections).join(', ') || 'none'})${hint}`,
      { field: `program.editableSections[${index}]` },
    );
  }

  // Outputs a caller hands to tell(), by artifact hash, example id and repeat.
  const given = new Map<string, unknown>();
  const givenKey = (hash: string, exampleId: string, repeat: number): string =>
    `${hash}\u0000${exampleId}\u0000${repeat}`;
  const seedHash = contentHash(options.artifact);
  const missingOutput = (hash: string, exampleId: string, repeat: number): InputError =>
    new InputError(
      `no output for example "${exampleId}" (repeat ${repeat}) of ${hash === seedHash ? 'the seed artifact' : `the artifact ${hash.slice(0, 12)}`}: this study has no execute, so kloop scores the outputs you give — the seed's as createStudy({ seedOutputs }), a candidate's as tell(candidate, results), each for every example of every partition (an artifact's outputs once given are stored and reused)`,
      { field: hash === seedHash ? 'seedOutputs' : 'results', exampleId },
    );
  /** Checks every output the caller gives for one artifact (before any is taken: a bad one leaves nothing behind), then keeps them. */
  const takeOutputs = (
    hash: string,
    results: ReadonlyArray<{ exampleId: string; output: unknown; repeat?: number }> | undefined,
    name: string,
  ): void => {
    if (results !== undefined && !Array.isArray(results))
      throw new InputError(`${name} must be an array of { exampleId, output, repeat? }`, { field: name });
    const seen = new Set<string>();
    for (const [index, result] of (results ?? []).entries()) {
      const field = `${name}[${index}]`;
      if (typeof result !== 'object' || result === null || typeof result.exampleId !== 'string')
        throw new InputError('a result must be { exampleId, output, repeat? } with a string exampleId', { field });
      if (!examples.some((example) => example.id === result.exampleId))
        throw new InputError(`no example "${result.exampleId}"`, { field: `${field}.exampleId` });
      const repeat = result.repeat ?? 0;
      if (!Number.isInteger(repeat) || repeat < 0 || repeat >= settings.gate.repeats) {
        throw new InputError(
          `repeat must be an integer from 0 to ${settings.gate.repeats - 1} (gate.repeats is ${settings.gate.repeats}), got ${JSON.stringify(repeat)}`,
          { field: `${field}.repeat` },
        );
      }
      const key = givenKey(hash, result.exampleId, repeat);
      if (seen.has(key))
        throw new InputError(`two results for example "${result.exampleId}", repeat ${repeat}`, { field });
      seen.add(key);
    }
    for (const result of results ?? []) given.set(givenKey(hash, result.exampleId, result.repeat ?? 0), result.output);
  };
  takeOutputs(seedHash, options.seedOutputs, 'seedOutputs');
  const execute = options.execute;
  const executor: Executor = {
    id: options.executorId ?? (execute !== undefined ? `code:${hashOf(String(execute))}` : 'caller-outputs'),
    deterministic,
    async execute(request): Promise<ExecutionResult> {
      const hash = contentHash(request.artifact);
      const key = givenKey(hash, request.exampleId ?? '', request.repeat);
      if (given.has(key)) return { ok: true, output: given.get(key) };
      if (execute === undefined) throw missingOutput(hash, request.exampleId ?? '', request.repeat);
      try {
        // A workflow that never settles still stops with the study (the abort rejects the wait).
        const output = await untilAborted(
          execute(request.artifact, request.input as Input, {
            repeat: request.repeat,
            text: request.text,
            ...(request.signal !== undefined ? { signal: request.signal } : {}),
          }),
          request.signal,
        );
        try {
          JSON.stringify(output);
        } catch (error) {
          // Outputs are stored as JSON: one that cannot be (a BigInt, a cycle) is an invalid output, not a crash of the run.
          return {
            ok: false,
            reason: 'error',
            message: `execute returned an output that is not JSON: ${error instanceof Error ? error.message : String(error)}`,
          };
        }
        return { ok: true, output };
      } catch (error) {
        if (request.signal?.aborted === true) throw error;
        return {
          ok: false,
          reason: 'error',
          message: `execute threw: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
    },
  };

  const dir = path.resolve(options.storage);
  const study: LoadedStudy = {
    dir,
    artifactPath: path.join(dir, '(artifact given in code)'),
    artifactText: options.artifact,
    instructions: program.instructions,
    constraintsText: program.constraints,
    constraints: {
      editableSections: program.mechanical.editableSections ?? [],
      maxArtifactCharacters: program.mechanical.maxArtifactCharacters,
      check: (incumbentText, candidateText) =>
        checkConstraints(program.mechanical, { incumbentText, candidateText, sectionsOf }),
    },
    corpus: examples,
    partitions,
    task,
    exampleFormat: format,
    executor,
    proposer: proposerOf(options.proposer),
    ...settings,
  };

  const file = studyDatabasePath(dir);
  createNotebookFolder(file);
  const db: StudyDatabase = await openDatabase(file);
  let lease: LeaseRecord;
  try {
    // The CLI's advice (--wait) means nothing here.
    lease = await acquireLease(db, {
      studyKey: dir,
      busyAdvice: 'close() the study there, or let its run end, then create it again',
    });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const heartbeat: LeaseHeartbeat = startLeaseHeartbeat(db, lease);
  const runOptions = {
    study,
    db,
    ...(options.calibration !== undefined ? { calibration: options.calibration } : {}),
    ...(options.onEvent !== undefined ? { onEvent: listenerOf(options.onEvent) } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };

  let engine: LoopEngine | null = null;
  let asked: Candidate[] = [];
  const told = new Set<Candidate>();
  let stop: RunOutcome | null = null;
  let closed = false;

  const scoresOf = async (text: string): Promise<Record<PartitionName, number | null>> => {
    const evaluator = createStudyEvaluator(study, db);
    const scores = {} as Record<PartitionName, number | null>;
    for (const name of PARTITIONS) {
      const score: PartitionScore = await evaluatePartition(evaluator, study, text, name, options.signal);
      scores[name] = score.composite;
    }
    return scores;
  };
  const best = async (): Promise<StudyBest> => {
    requireOpen();
    // Before the first ask() or optimize() the seed is registered now (as version 1, what the first run registers): the id is one kloop diff and activate know.
    const active = await ensureSeedVersion(db, study, () => new Date());
    return { versionId: active.id, text: active.text, scores: await scoresOf(active.text) };
  };
  const requireOpen = (): void => {
    if (closed) throw new InputError('the study is closed', { field: 'study' });
  };
  const endEngine = async (): Promise<void> => {
    if (engine === null) return;
    if (engine.currentRound() !== null) {
      const ended = await engine.endRound();
      if (ended !== null) stop = ended;
    }
    if (stop === null || stop.runId !== engine.runId)
      stop = await engine.finish(
        'interrupted',
        'the library run ended (close() or optimize()); the next run continues from here',
      );
    engine = null;
  };

  // One operation at a time, in call order: optimize(), ask(), tell() and close() read and write the open
  // round, so two at once would gate candidates against a stale incumbent (two tells accepted against the
  // same seed) or record a run twice. A call from within one of them (a proposer or onEvent calling back
  // into the study) would wait for itself: it is refused instead.
  const inside = new AsyncLocalStorage<string>();
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const running = inside.getStore();
    if (running !== undefined)
      return Promise.reject(
        new InputError(
          `${name}() was called from within this study's ${running}() (a proposer, execute or onEvent calling back into the study): it would wait for itself`,
          { field: 'study' },
        ),
      );
    const result = queue.then(() => inside.run(name, work));
    queue = result.catch(() => undefined);
    return result;
  };

  return {
    dir,
    task,
    settings: structuredClone(settings),
    optimize: () =>
      serial('optimize', async () => {
        requireOpen();
        await endEngine();
        const baseline = await scoresOf(options.artifact);
        stop = await runStudy(runOptions);
        return { ...stop, baseline, best: await best() };
      }),
    ask: () => serial('ask', () => ask()),
    tell: (candidate, results) => serial('tell', () => tell(candidate, results)),
    stopped: () => stop,
    best,
    close: () => serial('close', () => close()),
  };

  async function ask(): Promise<Candidate[]> {
    requireOpen();
    try {
      if (engine === null) {
        engine = await createLoopEngine(runOptions);
        stop = null;
      }
      if (engine.currentRound() !== null) {
        const ended = await engine.endRound();
        if (ended !== null) {
          stop = ended;
          return [];
        }
      }
      asked = [];
      told.clear();
      const opened = await engine.openRound();
      if (opened.kind === 'stop') {
        stop = opened.outcome;
        engine = null;
        return [];
      }
      const answer = await engine.ask();
      asked = answer.candidates;
      return [...asked];
    } catch (error) {
      if (engine === null) throw error;
      stop = await engine.fail(error);
      engine = null;
      return [];
    }
  }

  async function tell(
    candidate: Candidate,
    results?: ReadonlyArray<{ exampleId: string; output: unknown; repeat?: number }>,
  ): Promise<Told> {
    requireOpen();
    if (engine === null || engine.currentRound() === null || !asked.includes(candidate)) {
      throw new InputError('tell() takes a candidate of the last ask() of the open round', { field: 'candidate' });
    }
    if (told.has(candidate)) throw new InputError('this candidate was told already', { field: 'candidate' });
    const hash = contentHash(candidate.text);
    takeOutputs(hash, results, 'results');
    const [screened] = (await engine.screen([candidate])) as [ScreenedCandidate];
    const decision = await engine.tell(screened);
    told.add(candidate);
    if (asked.every((item) => told.has(item))) {
      const ended = await engine.endRound();
      if (ended !== null) stop = ended;
    }
    if (decision === null) {
      return {
        experimentId: 0,
        decision: 'skipped',
        reason: engine.budgetSpent() ? 'max_experiments' : 'decided_before',
        text: candidate.text,
        optimization: null,
        rebased: false,
      };
    }
    return decision;
  }

  async function close(): Promise<void> {
    if (closed) return;
    try {
      await endEngine();
    } finally {
      closed = true;
      await heartbeat.stop();
      await releaseLease(db, lease);
      await db.destroy();
    }
  }
}
