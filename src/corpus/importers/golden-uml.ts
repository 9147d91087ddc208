/**
 * Imports the Golden UML ModelSet layout (one folder per case holding
 * `description.md`, `plantuml.txt` and `metadata.txt`) as examples in the
 * public format, with partial gold: entities and relations only.
 *
 * - id: `golden-uml:<CaseFolderName>` (characters outside `[A-Za-z0-9._:-]`
 *   become `-`, reported);
 * - goal: the description without exercise instructions
 *   (`stripExerciseInstructions`, everything stripped is reported);
 * - expected: `umlDiagramToExpectedIntent` (see its mapping table); an
 *   `appType` only when the case's domain label has a defensible app type in
 *   {@link DOMAIN_APP_TYPES} (none does today: see the table);
 * - tags: `source:golden-uml`, `domain:<label in kebab-case>`;
 * - partition: `shadow` (imported examples are unseen checks first, DESIGN §4).
 *
 * Every example is validated with `exampleSchema`; a case that fails is
 * reported, not returned. The source data stays outside the repository (its
 * licence allows evaluation use only; see `shared/data/golden-uml/SOURCE.md`).
 *
 * Source: Charlotte-Verbruggen/GoldenUMLmodelset (snapshot d1835682, 2025-08-29).
 *
 * ```ts
 * const { examples, reports } = importGoldenUml('../shared/data/golden-uml');
 * reports.filter((report) => report.skipped.length > 0); // what could not be read
 * ```
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { exampleSchema, type IntentExampleRecord } from '../intent-example.ts';
import type { AppType } from '../../tasks/intent/vocabulary.ts';
import type { ExpectedIntent } from '../../tasks/intent/intent.ts';
import { stripExerciseInstructions, type StrippedText } from './exercise-instructions.ts';
import { parsePlantUml } from './plantuml.ts';
import { umlDiagramToExpectedIntent } from './uml-to-intent.ts';

/** A domain label's app type (one value, or primary first then accepted alternatives), with the reason. */
export interface DomainAppType {
  appType?: AppType | [AppType, ...AppType[]];
  reason: string;
}

/**
 * Domain label (from `metadata.txt`) → app type. The ModelSet's labels are
 * coarse industry domains; an app type is the kind of application. A label
 * gets an app type only when every case it could hold would be that kind of
 * application. None of the labels below passes that test, so imported
 * examples carry no `appType` (partial gold) and each report says why.
 * Labels not listed here get no app type either.
 */
export const DOMAIN_APP_TYPES: Readonly<Record<string, DomainAppType>> = Object.freeze({
  Sales: {
    reason: 'is a sales system, which may be an ecommerce, crm, marketplace or inventory application, or none of them',
  },
  'Business Services': { reason: 'is a sector, not a kind of application' },
  'Media and Publishing': { reason: 'covers games and media catalogues as well as content_publishing' },
  'Personal Activities': { reason: 'covers events, membership and booking applications alike' },
  Research: { reason: 'covers publication databases and project_management alike' },
  Logistics: { reason: 'covers field_service, inventory and delivery applications alike' },
  Healthcare: { reason: 'covers booking, care-record and billing applications alike; no healthcare app type exists' },
  Manufacturing: { reason: 'covers product configuration, device monitoring and inventory alike' },
  'Leisure and Recreation': { reason: 'covers events, booking and ordering applications alike' },
  Education: { reason: 'covers learning (enrolment and assessment) as well as administration and tutoring bookings' },
});

/** What happened to one case folder. */
export interface GoldenUmlReport {
  /** The case folder name. */
  caseId: string;
  /** Id of the produced example; absent when no example could be produced. */
  exampleId?: string;
  /** Domain label from metadata.txt, when present. */
  domain?: string;
  entityCount: number;
  relationCount: number;
  /** What could not be read or mapped (unread diagram lines, missing files, invalid example). */
  skipped: string[];
  /** Mapping decisions (enums, implicit classes, missing cardinalities, appType). */
  notes: string[];
  /** Exercise instructions removed from the description. */
  stripped: StrippedText[];
}

export interface GoldenUmlImport {
  examples: IntentExampleRecord[];
  reports: GoldenUmlReport[];
}

/** The three files of one case, as text (a missing file is undefined). */
export interface GoldenUmlCase {
  caseId: string;
  description?: string;
  plantUml?: string;
  metadata?: string;
}

/** Reads `key: value` lines of a metadata.txt (keys lower-cased, values trimmed). */
export function parseCaseMetadata(text: string): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const line of text.split(/\r\n|\r|\n/)) {
    const match = /^\s*([A-Za-z][\w -]*?)\s*:\s*(.*?)\s*$/.exec(line);
    if (match !== null) metadata[(match[1] ?? '').toLowerCase()] = match[2] ?? '';
  }
  return metadata;
}

function kebab(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Options of the Golden UML import. */
export interface GoldenUmlOptions {
  /** Domain label → app type table; default {@link DOMAIN_APP_TYPES}. */
  domainAppTypes?: Readonly<Record<string, DomainAppType>>;
}

/** Turns one case into an example and a report. Pure: no file access. */
export function importGoldenUmlCase(
  input: GoldenUmlCase,
  options: GoldenUmlOptions = {},
): { example?: IntentExampleRecord; report: GoldenUmlReport } {
  const domainAppTypes = options.domainAppTypes ?? DOMAIN_APP_TYPES;
  const report: GoldenUmlReport = {
    caseId: input.caseId,
    entityCount: 0,
    relationCount: 0,
    skipped: [],
    notes: [],
    stripped: [],
  };
  if (input.plantUml === undefined) report.skipped.push('plantuml.txt missing: no gold, no example');
  if (input.description === undefined) report.skipped.push('description.md missing: no goal, no example');
  if (input.metadata === undefined) report.notes.push('metadata.txt missing: no domain label');

  const metadata = parseCaseMetadata(input.metadata ?? '');
  const domain = metadata.domain?.trim() || undefined;
  if (domain !== undefined) report.domain = domain;
  const expected: ExpectedIntent = {};
  if (domain === undefined) report.notes.push('appType left out: no domain label');
  else {
    const mapping = Object.hasOwn(domainAppTypes, domain) ? domainAppTypes[domain] : undefined;
    if (mapping === undefined) report.notes.push(`appType left out: domain "${domain}" is not in the domain table`);
    else if (mapping.appType === undefined) report.notes.push(`appType left out: domain "${domain}" ${mapping.reason}`);
    else {
      expected.appType = mapping.appType;
      report.notes.push(`appType from domain "${domain}": ${mapping.reason}`);
    }
  }
  if (input.plantUml !== undefined) {
    const mapping = umlDiagramToExpectedIntent(parsePlantUml(input.plantUml));
    Object.assign(expected, mapping.expected);
    report.entityCount = mapping.entityCount;
    report.relationCount = mapping.relationCount;
    report.skipped.push(...mapping.skipped);
    report.notes.push(...mapping.notes);
    if (mapping.entityCount === 0) report.skipped.push('the diagram yields no entity');
  }
  report.notes.push('no roles, behaviours or projections: partial gold');
  let goal = '';
  if (input.description !== undefined) {
    const stripping = stripExerciseInstructions(input.description);
    goal = stripping.text;
    report.stripped = stripping.stripped;
    if (goal === '') report.skipped.push('the description is empty once instructions are stripped: no example');
  }
  if (input.plantUml === undefined || goal === '' || report.entityCount === 0) return { report };

  const safeCaseId = input.caseId.replace(/[^A-Za-z0-9._:-]/g, '-');
  if (safeCaseId !== input.caseId) report.notes.push(`case folder name sanitised for the id: ${safeCaseId}`);
  const tags = ['source:golden-uml'];
  if (domain !== undefined && kebab(domain) !== '') tags.push(`domain:${kebab(domain)}`);
  const parsed = exampleSchema.safeParse({ id: `golden-uml:${safeCaseId}`, goal, expected, tags, partition: 'shadow' });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      report.skipped.push(`invalid example at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
    return { report };
  }
  report.exampleId = parsed.data.id;
  return { example: parsed.data, report };
}

function readOptional(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/**
 * Reads every case folder of `dir` (sorted by name) and imports it.
 *
 * @throws the file system's error when `dir` cannot be listed
 */
export function importGoldenUml(dir: string, options: GoldenUmlOptions = {}): GoldenUmlImport {
  const examples: IntentExampleRecord[] = [];
  const reports: GoldenUmlReport[] = [];
  const folders = readdirSync(dir)
    .filter((name) => statSync(path.join(dir, name)).isDirectory())
    .sort((a, b) => a.localeCompare(b, 'en'));
  for (const caseId of folders) {
    const folder = path.join(dir, caseId);
    const { example, report } = importGoldenUmlCase(
      {
        caseId,
        description: readOptional(path.join(folder, 'description.md')),
        plantUml: readOptional(path.join(folder, 'plantuml.txt')),
        metadata: readOptional(path.join(folder, 'metadata.txt')),
      },
      options,
    );
    if (example !== undefined) examples.push(example);
    reports.push(report);
  }
  return { examples, reports };
}
