/**
 * The sections of a markdown prompt artifact: moved to
 * `src/artifact/markdown-sections.ts` (they are not intent-specific: every
 * prompt artifact, and the reflective proposer, use them). Re-exported here
 * so that existing imports keep working.
 *
 * @module
 */
export * from '../../../artifact/markdown-sections.ts';
