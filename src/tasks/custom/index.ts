/**
 * The `custom` task: a scorer module of the user's (JavaScript or
 * TypeScript, ESM or CommonJS) in the study folder.
 *
 * @module
 */
export {
  CUSTOM_MODULE_ERROR,
  CUSTOM_SCORER_ERROR,
  CUSTOM_SCORER_VERSION,
  customTaskOf,
  loadCustomTask,
  locateScorerError,
  type CustomTask,
  type CustomTaskOptions,
  type CustomTaskSource,
} from './custom-task.ts';
export { loadStudyModule, MODULE_EXTENSIONS, parseModuleReference, type LoadedModule } from './module-loader.ts';
