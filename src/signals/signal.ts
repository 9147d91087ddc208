/**
 * The production signal (Loop D): one structured record per assembly in real
 * use, emitted by the runtime API, ingested from a JSON Lines file
 * (`kloop signals ingest`) or posted to the endpoint (`kloop serve`).
 *
 * ```json
 * {
 *   "id": "2f1c7a0e-5b7e-4a53-9a8e-1f0d3c2b9a10",
 *   "time": "2025-03-04T10:15:00Z",
 *   "assemblyMethod": "decomposed",
 *   "confidence": 0.62,
 *   "appClass": "booking",
 *   "hasCommitments": true,
 *   "entityCount": 5,
 *   "artifactVersion": "sha256:9c1e…",
 *   "goal": "a kennel where owners book stays for their pets",
 *   "uncoveredEntities": ["Pet", "Kennel"],
 *   "uncoveredBehaviors": ["rating"],
 *   "patterns": ["booking", "membership"],
 *   "roles": ["party", "resource", "commitment"],
 *   "behaviors": ["scheduling", "payment", "rating"]
 * }
 * ```
 *
 * Required: `id`, `time`, `assemblyMethod`, `confidence`, `appClass`,
 * `hasCommitments`, `entityCount`, `artifactVersion`. Everything else is
 * optional. Unknown fields are refused (a misspelt `confidance` is an error,
 * not a silently missing value). Signals are idempotent by `id`: a second
 * signal with an id already stored is counted as a duplicate and not stored
 * (the first one wins).
 *
 * Source: DESIGN.md §5 (Loop D), seeds/000 (`cluster_unmatched_assemblies`).
 */
import { z } from 'zod';
import { ASSEMBLY_METHODS } from '../assembly/assembly-method.ts';
import { SIGNAL_SOURCES } from './production-signal.ts';
import type { SignalTable } from '../storage/schema.ts';
import { behaviorSchema, entityRoleSchema } from '../tasks/intent/intent.ts';

export { ASSEMBLY_METHODS };
export type SignalAssemblyMethod = (typeof ASSEMBLY_METHODS)[number];

/** Where a stored signal came from (defined once, in ./production-signal.ts). */
export { SIGNAL_SOURCES };
export type SignalSource = (typeof SIGNAL_SOURCES)[number];

/** Longest goal text a signal may carry, in characters. */
export const MAX_SIGNAL_GOAL_CHARACTERS = 20_000;

const shortText = (maximum: number) => z.string().trim().min(1).max(maximum);

/** The schema of one signal (zod; strict: unknown fields are refused). */
export const signalSchema = z.strictObject({
  /** Unique id of the assembly (a UUID is typical): printable ASCII without spaces, at most 200 characters. */
  id: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[\x21-\x7E]+$/, 'ids are printable ASCII without spaces'),
  /** When the assembly happened: ISO 8601 date-time with `Z` or an offset, e.g. `2025-03-04T10:15:00Z`. */
  time: z.iso.datetime({ offset: true }),
  /** `direct` (one pattern covered everything), `decomposed` (several patterns) or `partial` (something stayed uncovered). */
  assemblyMethod: z.enum(ASSEMBLY_METHODS),
  /** Assembly confidence in [0, 1] (`CONFIDENCE_WEIGHTS` in `src/assembly/assemble.ts`). */
  confidence: z.number().min(0).max(1),
  /** Application class: the intent's app type (`booking`, `crm`, ... or any lower-case slug). */
  appClass: z
    .string()
    .min(1)
    .max(60)
    .regex(/^[a-z][a-z0-9_-]*$/, 'app classes are lower-case slugs, e.g. booking or field_service'),
  /** Whether the intent has an entity with role `commitment`. */
  hasCommitments: z.boolean(),
  /** Number of entities of the intent (a whole number ≥ 0). */
  entityCount: z.int().min(0).max(10_000),
  /** The artifact version that produced the intent (its content hash or registry id). */
  artifactVersion: shortText(200),
  /** The user's goal text. Optional; not stored when `signals.storeGoals` is false. */
  goal: z.string().max(MAX_SIGNAL_GOAL_CHARACTERS).nullable().optional(),
  /** Intent entities no chosen pattern covered (names as the intent wrote them). */
  uncoveredEntities: z.array(shortText(80)).max(200).optional(),
  /** Intent behaviours no chosen pattern covered (closed vocabulary). */
  uncoveredBehaviors: z.array(behaviorSchema).max(20).optional(),
  /** Ids of the patterns the assembly used. */
  patterns: z.array(shortText(80)).max(50).optional(),
  /** The intent's entity roles (closed vocabulary), for Loop C shape mining. */
  roles: z.array(entityRoleSchema).max(60).optional(),
  /** The intent's behaviours (closed vocabulary), for Loop C shape mining. */
  behaviors: z.array(behaviorSchema).max(20).optional(),
  /** Sections of the artifact that contributed to the answer, when the runtime knows (deprecation analysis). */
  artifactSections: z.array(shortText(120)).max(200).optional(),
  /** Time the assembly took, in milliseconds. */
  timingMs: z.number().min(0).optional(),
});

/** A signal as written by its producer (before defaults; same as the output: there are none). */
export type Signal = z.infer<typeof signalSchema>;

/** The signal schema as JSON Schema (draft 2020-12), for producers (`kloop signals schema`). */
export function signalJsonSchema(): Record<string, unknown> {
  return { title: 'kloop production signal', ...z.toJSONSchema(signalSchema) } as Record<string, unknown>;
}

/**
 * A stored signal, read back from the `signals` table (read-only record).
 * Optional lists read back as empty lists; `roles`/`behaviors` stay
 * `undefined` when the producer did not send them (unknown ≠ empty).
 */
export interface StoredSignal {
  readonly id: string;
  /** ISO 8601 UTC (`toISOString()` form). */
  readonly time: string;
  readonly assemblyMethod: SignalAssemblyMethod;
  readonly confidence: number;
  readonly appClass: string;
  readonly hasCommitments: boolean;
  readonly entityCount: number;
  readonly artifactVersion: string;
  readonly goal: string | null;
  readonly uncoveredEntities: readonly string[];
  readonly uncoveredBehaviors: readonly string[];
  readonly patterns: readonly string[];
  readonly roles?: readonly string[];
  readonly behaviors?: readonly string[];
  readonly artifactSections?: readonly string[];
  readonly timingMs?: number;
  readonly source: string;
  readonly receivedAt: string;
}

/** One problem with one signal: where (line of a file, index of a batch) and which field. */
export interface SignalIssue {
  /** 1-based line of a JSON Lines file or body. */
  line?: number;
  /** 0-based index in a posted batch (or the record number in a JSON Lines body). */
  index?: number;
  /** Field path such as `confidence` or `uncoveredBehaviors[1]`; absent for a whole record. */
  field?: string;
  message: string;
}

/** Formats a field path: `uncoveredBehaviors[1]`. */
export function formatSignalField(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

/** `line 12: confidence: ...`, `index 3: id: ...`, leaving out what is unknown. */
export function formatSignalIssue(issue: SignalIssue): string {
  const place =
    issue.line !== undefined ? `line ${issue.line}: ` : issue.index !== undefined ? `index ${issue.index}: ` : '';
  const field = issue.field !== undefined && issue.field !== '' ? `${issue.field}: ` : '';
  return `${place}${field}${issue.message}`;
}

/** The result of validating one value (zod's `safeParse` shape). */
export type SignalParseResult = { success: true; signal: Signal } | { success: false; issues: SignalIssue[] };

/**
 * Validates one value against {@link signalSchema}. Never throws; every
 * problem is an issue naming its field (unknown fields are named one by one).
 */
export function parseSignal(value: unknown, where: { line?: number; index?: number } = {}): SignalParseResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      success: false,
      issues: [
        {
          ...where,
          message: `a signal must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
        },
      ],
    };
  }
  const parsed = signalSchema.safeParse(value);
  if (parsed.success) return { success: true, signal: parsed.data };
  const issues: SignalIssue[] = [];
  for (const issue of parsed.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        issues.push({ ...where, field: formatSignalField([...issue.path, key]), message: `unknown field "${key}"` });
    } else {
      const field = formatSignalField(issue.path);
      const missing =
        issue.code === 'invalid_type' &&
        (value as Record<string, unknown>)[String(issue.path[0])] === undefined &&
        issue.path.length === 1;
      issues.push({
        ...where,
        ...(field !== '' ? { field } : {}),
        message: missing ? 'required field is missing' : issue.message,
      });
    }
  }
  return { success: false, issues };
}

/** Options of {@link toSignalRow}. */
export interface SignalRowOptions {
  source: SignalSource;
  /** Store the goal text. Default true (`signals.storeGoals`). */
  storeGoals?: boolean;
  /** ISO time the signal was received. */
  receivedAt: string;
}

/** The `signals` table row of a validated signal (time normalised to UTC `toISOString()`). */
export function toSignalRow(signal: Signal, options: SignalRowOptions): SignalTable {
  const detail: Record<string, unknown> = {
    uncoveredEntities: signal.uncoveredEntities ?? [],
    uncoveredBehaviors: signal.uncoveredBehaviors ?? [],
    patterns: signal.patterns ?? [],
  };
  if (signal.roles !== undefined) detail.roles = signal.roles;
  if (signal.behaviors !== undefined) detail.behaviors = signal.behaviors;
  if (signal.artifactSections !== undefined) detail.artifactSections = signal.artifactSections;
  if (signal.timingMs !== undefined) detail.timingMs = signal.timingMs;
  const goal = options.storeGoals === false ? null : (signal.goal ?? null);
  return {
    id: signal.id,
    time: new Date(signal.time).toISOString(),
    assembly_method: signal.assemblyMethod,
    confidence: signal.confidence,
    app_class: signal.appClass,
    has_commitments: signal.hasCommitments ? 1 : 0,
    entity_count: signal.entityCount,
    artifact_version: signal.artifactVersion,
    goal: goal === null || goal.trim() === '' ? null : goal,
    detail: JSON.stringify(detail),
    source: options.source,
    received_at: options.receivedAt,
  };
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((member): member is string => typeof member === 'string') : undefined;
}

/** Reads a `signals` row back into a {@link StoredSignal}; a malformed `detail` reads as empty lists. */
export function fromSignalRow(row: SignalTable): StoredSignal {
  let detail: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(row.detail) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      detail = parsed as Record<string, unknown>;
  } catch {
    detail = {};
  }
  const roles = stringList(detail.roles);
  const behaviors = stringList(detail.behaviors);
  const artifactSections = stringList(detail.artifactSections);
  const timingMs = detail.timingMs;
  return Object.freeze({
    id: row.id,
    time: row.time,
    assemblyMethod: row.assembly_method as SignalAssemblyMethod,
    confidence: row.confidence,
    appClass: row.app_class,
    hasCommitments: row.has_commitments !== 0,
    entityCount: row.entity_count,
    artifactVersion: row.artifact_version,
    goal: row.goal,
    uncoveredEntities: stringList(detail.uncoveredEntities) ?? [],
    uncoveredBehaviors: stringList(detail.uncoveredBehaviors) ?? [],
    patterns: stringList(detail.patterns) ?? [],
    ...(roles !== undefined ? { roles } : {}),
    ...(behaviors !== undefined ? { behaviors } : {}),
    ...(artifactSections !== undefined ? { artifactSections } : {}),
    ...(typeof timingMs === 'number' ? { timingMs } : {}),
    source: row.source,
    receivedAt: row.received_at,
  });
}
