/**
 * One problem in a corpus file, as the corpus readers
 * (`importers/public-format.ts`) and admission (`admission-check.ts`) report it.
 *
 * @module
 */

/** One problem in a corpus file. */
export interface CorpusFileError {
  file: string;
  /** 1-based line; absent when the problem concerns the whole file. */
  line?: number;
  /** Field path inside the record, e.g. `expected.entities[0].role`; absent for a whole record or file. */
  field?: string;
  message: string;
}
