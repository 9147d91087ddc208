/** The executor and the proposer of a study, composed from its config (src/study/compose.ts). */
import { createCommandExecutor } from '../executors/command/command-executor.ts';
import type { Executor } from '../executors/executor.ts';
import { createLlmExecutor } from '../executors/llm/llm-executor.ts';
import { createRoutingRulesExecutor } from '../executors/routing-rules/routing-rules-executor.ts';
import { createKeywordRulesProposer } from '../proposers/keyword-rules/keyword-rules-proposer.ts';
import type { ErrorDrivenProposerOptions } from '../proposers/error-driven-proposer.ts';
import type { Proposer } from '../proposers/proposer.ts';
import { createReflectiveProposer } from '../proposers/reflective-proposer.ts';
import { createSearchProposer } from '../proposers/search/search-proposer.ts';
import type { LlmClient } from '../providers/llm-client.ts';
import { createLlmIntentExecutor } from '../tasks/intent/llm/llm-executor.ts';
import path from 'node:path';
import { ERROR_DRIVEN_PROPOSER_ID, OFFLINE_EXECUTOR_ID } from '../tasks/intent/offline/ids.ts';
import type { Task } from '../tasks/task.ts';
import { DEFAULT_COMMAND_CONCURRENCY, DEFAULT_COMMAND_TIMEOUT_MS } from '../config/config.ts';
import {
  checkComposition,
  composeWeights,
  configError,
  isIntentTask,
  type CompositionConfig,
} from './composition-config.ts';
import { DATA_EXTENSIONS } from './compose-sections.ts';

/** The offline executor, its module (with the NLP library, about 0.3 s) loaded on the first execution. */
export function createLazyOfflineExecutor(): Executor {
  let loaded: Promise<Executor> | undefined;
  const load = (): Promise<Executor> =>
    (loaded ??= import('../tasks/intent/offline/offline-executor.ts').then((module) => module.createOfflineExecutor()));
  return { id: OFFLINE_EXECUTOR_ID, deterministic: true, execute: async (request) => (await load()).execute(request) };
}

/** The error-driven (TBL) playbook proposer, its module loaded on the first proposal. */
export function createLazyErrorDrivenProposer(options: ErrorDrivenProposerOptions = {}): Proposer {
  let loaded: Promise<Proposer> | undefined;
  const load = (): Promise<Proposer> =>
    (loaded ??= import('../proposers/error-driven-proposer.ts').then((module) =>
      module.createErrorDrivenProposer(options),
    ));
  return { id: ERROR_DRIVEN_PROPOSER_ID, propose: async (context) => (await load()).propose(context) };
}

/** What the executor may need beyond the config: the model client of an `llm` executor. */
export interface ExecutorParts {
  /** The executor's model client (src/providers); required by `llm`. */
  llmClient?: LlmClient;
  /** `--deterministic`: the model answers identically at temperature 0. Default false. */
  deterministic?: boolean;
}

/**
 * Builds the study's executor from `executor:` (see the module comment).
 *
 * @throws InputError for an `llm` executor without a model client ("needs a
 *   model provider"), and for the kinds not wired yet
 */
export function composeExecutor(config: CompositionConfig, task: Task, parts: ExecutorParts = {}): Executor {
  const settings = config.executor;
  switch (settings.kind) {
    case 'offline':
      return createLazyOfflineExecutor();
    case 'routing-rules':
      return createRoutingRulesExecutor();
    case 'command': {
      const options = {
        command: settings.command ?? [],
        cwd: config.dir,
        timeoutMs: settings.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
        concurrency: settings.concurrency ?? DEFAULT_COMMAND_CONCURRENCY,
        deterministic: settings.deterministic === true,
      };
      return createCommandExecutor(options);
    }
    case 'llm': {
      if (parts.llmClient === undefined)
        return throwing(configError(config, 'executor.kind', 'executor kind "llm" needs a model provider'));
      if (isIntentTask(task))
        return createLlmIntentExecutor({
          client: parts.llmClient,
          ...(parts.deterministic !== undefined ? { deterministic: parts.deterministic } : {}),
        });
      return createLlmExecutor({ client: parts.llmClient, task, deterministic: parts.deterministic === true });
    }
  }
}

function throwing(error: Error): never {
  throw error;
}

/** What the proposer may need beyond the config: the model client of a `reflective` proposer. */
export interface ProposerParts {
  /** The proposer's model client (src/providers); required by `reflective`. */
  proposerClient?: LlmClient;
}

/**
 * Builds the study's proposer from `proposer:` (see the module comment).
 *
 * @throws InputError for a `reflective` proposer without a model client
 *   ("needs a model provider"), and for the error-driven keyword-rules proposer until it is wired
 */
export function composeProposer(
  config: CompositionConfig & { artifact?: string },
  task: Task,
  parts: ProposerParts = {},
): Proposer {
  const settings = config.proposer;
  if (settings.kind === 'search') return composeSearchProposer(config);
  if (settings.kind === 'reflective') {
    if (parts.proposerClient === undefined)
      throw configError(config, 'proposer.kind', 'proposer kind "reflective" needs a model provider');
    // A program's JSON or YAML artifact is edited by its top-level keys' values (src/proposers/data-edits.ts); a prompt by its ## sections.
    const dataFile =
      config.executor.kind !== 'offline' && config.executor.kind !== 'llm' && config.artifact !== undefined;
    return createReflectiveProposer({
      client: parts.proposerClient,
      ...(dataFile ? { artifactFile: path.basename(config.artifact!) } : {}),
    });
  }
  checkComposition(config, task);
  // A command program's artifact, for a classification or custom task, is read as a routing-rules file
  // (kloop init writes one); the proposer reports a failed answer when it is not one.
  if (config.executor.kind === 'routing-rules' || config.executor.kind === 'command') {
    return createKeywordRulesProposer({
      ...(settings.maxEvaluations !== undefined ? { maxEvaluations: settings.maxEvaluations } : {}),
      ...(settings.maxScreened !== undefined ? { maxScreened: settings.maxScreened } : {}),
      // The gate skips a delta this close to one tried before; the proposer does not spend a slot on one.
      minDeltaDistance: config.gate.minDeltaDistance,
      // Only the routing-rules executor reads a `scores` section (format 2); a command program may not.
      learnScores: config.executor.kind === 'routing-rules',
      ...(config.artifact !== undefined ? { artifactFile: path.basename(config.artifact) } : {}),
    });
  }
  return createLazyErrorDrivenProposer({
    ...(settings.maxEvaluations !== undefined ? { maxEvaluations: settings.maxEvaluations } : {}),
    ...(settings.maxScreened !== undefined ? { maxScreened: settings.maxScreened } : {}),
    weights: composeWeights(task, config),
  });
}

/**
 * The search proposer (src/proposers/search/): its space, sampler settings
 * and the gate's `minDeltaDistance` from `proposer:`.
 *
 * @throws InputError naming `proposer.kind` when the artifact is not a YAML or JSON file
 */
function composeSearchProposer(config: CompositionConfig & { artifact?: string }): Proposer {
  const settings = config.proposer;
  const artifactFile = config.artifact ?? '';
  if (!DATA_EXTENSIONS.has(path.extname(artifactFile).toLowerCase())) {
    throw configError(
      config,
      'proposer.kind',
      `the search proposer sets parameters in a YAML or JSON artifact (.yaml, .yml, .json); this study's artifact is ${path.basename(artifactFile) || 'not named'}`,
    );
  }
  return createSearchProposer({
    space: settings.space ?? {},
    artifactFile: path.basename(artifactFile),
    sampler: {
      ...(settings.startupTrials !== undefined ? { startupTrials: settings.startupTrials } : {}),
      ...(settings.gamma !== undefined ? { gamma: settings.gamma } : {}),
      ...(settings.tpe !== undefined ? { tpe: settings.tpe } : {}),
    },
    minDeltaDistance: config.gate.minDeltaDistance,
  });
}
