/**
 * The LLM executor for any task (see `llm-executor.ts`), its prompt
 * templates and its lenient answer reading.
 *
 * @module
 */
export { createLlmExecutor, LLM_EXECUTOR_VERSION } from './llm-executor.ts';
export type { LlmExecutorOptions } from './llm-executor.ts';
export { DEFAULT_CONTRACT_LINE, DEFAULT_SCHEMA_NAME, llmOutputFormat } from './output-format.ts';
export type { LlmExecutorTask, LlmOutputFormat } from './output-format.ts';
export { fillPromptTemplate, readPromptTemplate } from './prompt-template.ts';
export type { FilledTemplate, Placeholder, TemplateReading } from './prompt-template.ts';
export { readJsonAnswer } from './read-json-answer.ts';
export type { JsonAnswerReading } from './read-json-answer.ts';
