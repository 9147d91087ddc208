/**
 * Importers: turn externally written corpora into examples in the public
 * format (`src/corpus/example.ts`).
 *
 * - `readCorpusFile` / `importPublicFormat`: JSONL, YAML or JSON files already
 *   in the public format, with errors naming file, line and field.
 * - `importGoldenUml`: the Golden UML ModelSet case folders, as partial gold
 *   (entities and relations), shadow partition.
 * - `parsePlantUml`: the tolerant PlantUML class-diagram reader underneath.
 */
export {
  corpusFormatOf,
  formatFieldPath,
  importPublicFormat,
  parsePublicFormat,
  readCorpusFile,
  type CorpusFileError,
  type CorpusFileResult,
  type PublicFormat,
} from './public-format.ts';
export {
  DOMAIN_APP_TYPES,
  importGoldenUml,
  importGoldenUmlCase,
  parseCaseMetadata,
  type DomainAppType,
  type GoldenUmlCase,
  type GoldenUmlImport,
  type GoldenUmlOptions,
  type GoldenUmlReport,
} from './golden-uml.ts';
export {
  parsePlantUml,
  type PlantUmlAssociationClass,
  type PlantUmlClass,
  type PlantUmlClassKeyword,
  type PlantUmlDiagram,
  type PlantUmlEnum,
  type PlantUmlNote,
  type PlantUmlNoteTarget,
  type PlantUmlPackage,
  type PlantUmlRelation,
  type PlantUmlRelationKind,
  type PlantUmlUnread,
} from './plantuml.ts';
export { cardinalityOf, multiplicityBound, umlDiagramToExpectedIntent, type UmlMapping } from './uml-to-intent.ts';
export {
  instructionReason,
  splitSentences,
  stripExerciseInstructions,
  type InstructionStripping,
  type StrippedText,
} from './exercise-instructions.ts';
