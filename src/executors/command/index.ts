/**
 * The command executor: any program as the workflow under optimization
 * (see `command-executor.ts` for the protocol).
 *
 * @module
 */
export {
  COMMAND_EXECUTOR_VERSION,
  createCommandExecutor,
  DEFAULT_COMMAND_CONCURRENCY,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
} from './command-executor.ts';
export type { CommandExecutorOptions } from './command-executor.ts';
export { createArtifactFiles, defaultArtifactDirectory } from './artifact-files.ts';
export type { ArtifactFiles } from './artifact-files.ts';
export { readProgramOutput } from './read-program-output.ts';
export type { ProgramOutput } from './read-program-output.ts';
