/**
 * How an intent was assembled onto the pattern library (see ./assemble.ts):
 * one pattern covers it (`direct`), several do (`decomposed`), or part of it
 * stays uncovered (`partial`). A module of its own, with no imports, so that
 * reading `kloop.yaml` (whose `signals` section names these methods) stays
 * light.
 */
export const ASSEMBLY_METHODS = ['direct', 'decomposed', 'partial'] as const;
export type AssemblyMethod = (typeof ASSEMBLY_METHODS)[number];
