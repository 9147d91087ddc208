/**
 * Admission of corpus-file records (DESIGN §4; docs/corpus.md): every record
 * of the corpus files that is new to the study passes the same quality gate
 * as `kloop corpus add` (`checkRecords`, admission-check.ts: duplicate id, non-trivial gold,
 * grounding, near-duplicate) and is placed by the lifecycle:
 *
 * - on a study's first run (no member recorded yet) every record is new and
 *   takes the partition its file names;
 * - later, a new record enters **shadow** first, whatever its file says,
 *   except anchors (hand-chosen in the files), which enter anchor.
 *
 * A record that fails a check is **refused**: it is left out of the study
 * (every command sees the corpus without it) and the run says so with
 * `file:line` and the reason; it is checked again at every load, so fixing
 * the record admits it. A record that cannot be parsed or breaks the schema
 * is not refused but bad input (the loader's InputError, exit 2), as before.
 *
 * A goal shared by two partitions (identical or a near-duplicate: bigram
 * Jaccard distance below the admission distance) is a *leak*
 * ({@link findStudyLeaks}): two examples of the study in different
 * partitions, or two records of the corpus files whose `partition` fields
 * differ (admitted or not). It is an error, not a refusal, since which of
 * the two partitions the request belongs to is the author's call. Loading the study refuses (exit 2, code
 * `partition_leak`, {@link partitionLeakError}), naming both records by
 * `file:line`; only `kloop corpus status` and `kloop corpus promote`, which
 * show and resolve leaks, load a study that has one. A near-duplicate within
 * one partition is no leak: the later record is refused and left out.
 */
import { createHash } from 'node:crypto';
import { InputError } from '../errors.ts';
import { mcnemarMinimumPairs } from '../stats/mcnemar.ts';
import type { AdmissionOptions, AdmissionReason, CandidateRecord } from './admission-check.ts';
import { NEAR_DUPLICATE_DISTANCE, checkRecords, locationOf } from './admission-check.ts';
import type { Example, PartitionName } from './example.ts';
import type { ExampleFormat } from './example-format.ts';
import { GoalIndex } from './goal-index.ts';
import type { CorpusMember, FileExample } from './lifecycle.ts';
import { MIN_ANCHOR_EXAMPLES, MIN_SHADOW_EXAMPLES, resolveCorpus } from './lifecycle.ts';

/** A corpus-file record admitted into the study now, and where it went. */
export interface FileRecordAdmitted {
  id: string;
  file: string;
  line?: number;
  /** `file:line`. */
  location: string;
  partition: PartitionName;
  /** How it was placed: as its file says on the first run, a new anchor, or shadow first. */
  placement: 'initial' | 'anchor' | 'shadow_first';
  /** Why this partition (one sentence). */
  reason: string;
  notes: string[];
}

/** A corpus-file record the quality gate refused: left out of the study. */
export interface FileRecordRefused {
  id: string;
  file: string;
  line?: number;
  /** `file:line`. */
  location: string;
  reasons: AdmissionReason[];
  /** A hash of the record and its reasons: the history notes one refusal per distinct record. */
  fingerprint: string;
}

/** The corpus files against the study's members. */
export interface FileAdmission {
  /** No member recorded yet: the study's first run. */
  initial: boolean;
  /** Every record of the corpus files, in file order. */
  records: readonly FileExample[];
  /** The file examples the study uses: those already members, and those admitted now (file order). */
  accepted: FileExample[];
  /** Records new to the study that passed the gate. */
  admitted: FileRecordAdmitted[];
  /** Records new to the study that failed it. */
  refused: FileRecordRefused[];
  /** Records new to the study left for later, unchecked (`deferNew`: a round is open). */
  deferred: FileExample[];
}

/** Options of {@link admitFileRecords}. */
export interface FileAdmissionOptions {
  /** Distance below which two goals are near-duplicates. Default {@link NEAR_DUPLICATE_DISTANCE}. */
  nearDuplicateDistance?: number;
  /** The study's record format (its task's admission rules: an intent study's format carries its partial-gold setting). */
  format: ExampleFormat;
  /** Leave new records out, unchecked, for later (a round is open: its partitions must not change). Default false. */
  deferNew?: boolean;
}

/** `file:line` (or the file) of every example: file records from their files, admitted examples from their admission. */
export function memberLocations(files: readonly FileExample[], members: readonly CorpusMember[]): Map<string, string> {
  const locations = new Map<string, string>();
  for (const member of members) {
    if (member.origin === 'admitted')
      locations.set(
        member.exampleId,
        `${locationOf(member.source, member.line) ?? member.source} (admitted with kloop corpus add)`,
      );
  }
  for (const { example, file, line } of files) locations.set(example.id, locationOf(file, line) ?? file);
  return locations;
}

/**
 * Checks the records of the corpus files that are new to the study (pure).
 * See the module comment for the rules.
 */
export function admitFileRecords(
  records: readonly FileExample[],
  members: readonly CorpusMember[],
  options: FileAdmissionOptions,
): FileAdmission {
  const active = new Map(
    members.filter((member) => member.partition !== 'removed').map((member) => [member.exampleId, member]),
  );
  const initial = members.length === 0;
  const known = records.filter(({ example }) => active.get(example.id)?.origin === 'file');
  const newcomers = records.filter(({ example }) => active.get(example.id)?.origin !== 'file');
  const deferred = options.deferNew === true && !initial ? newcomers : [];
  const fresh = deferred.length > 0 ? [] : newcomers;
  const existing = resolveCorpus(known, members).corpus;
  // Ids of admitted examples (kept or removed) are taken; a removed file example coming back is not.
  const taken = new Set(members.filter((member) => member.origin === 'admitted').map((member) => member.exampleId));
  const candidates: CandidateRecord[] = fresh.map(({ example, file, line }, index) => ({
    index,
    id: example.id,
    example,
    file,
    errors: [],
    ...(line !== undefined ? { line } : {}),
  }));
  const fileOf = new Map(fresh.map((entry) => [entry.example.id, entry]));
  const verdicts = checkRecords(candidates, existing, taken, options.format, {
    placeIn: filePlacement(initial),
    locations: memberLocations(known, members),
    ...(options.nearDuplicateDistance !== undefined ? { nearDuplicateDistance: options.nearDuplicateDistance } : {}),
  });
  const admittedIds = new Set<string>();
  const admitted: FileRecordAdmitted[] = [];
  const refused: FileRecordRefused[] = [];
  verdicts.forEach((verdict, index) => {
    const { example, file, line } = fresh[index]!;
    const location = locationOf(file, line) ?? file;
    if (verdict.admitted) {
      admittedIds.add(example.id);
      const partition = verdict.example!.partition;
      const returning = members.some((member) => member.exampleId === example.id && member.partition === 'removed');
      const placement = initial ? 'initial' : partition === 'anchor' ? 'anchor' : 'shadow_first';
      const reason =
        placement === 'initial'
          ? `${partition} in ${file} when the study began`
          : placement === 'anchor'
            ? `new anchor in ${file} (anchors are hand-chosen in the corpus files)`
            : `${returning ? 'back' : 'new'} in ${file} after the study began: shadow first`;
      admitted.push({
        id: example.id,
        file,
        ...(line !== undefined ? { line } : {}),
        location,
        partition,
        placement,
        reason,
        notes: verdict.notes,
      });
    } else {
      refused.push({
        id: example.id,
        file,
        ...(line !== undefined ? { line } : {}),
        location,
        reasons: verdict.reasons,
        fingerprint: refusalFingerprint(fileOf.get(example.id)!, verdict.reasons),
      });
    }
  });
  const accepted = records.filter(
    ({ example }) => active.get(example.id)?.origin === 'file' || admittedIds.has(example.id),
  );
  return { initial, records, accepted, admitted, refused, deferred };
}

/**
 * Where a new file record goes: its file's partition when the study begins
 * (or an anchor, always); after, shadow first, with a note when the file
 * said another partition.
 */
function filePlacement(initial: boolean): NonNullable<AdmissionOptions['placeIn']> {
  return (example) => {
    if (initial || example.partition === 'anchor') return { partition: example.partition };
    return example.partition === 'shadow'
      ? { partition: 'shadow' }
      : {
          partition: 'shadow',
          note: `the file says partition "${example.partition}"; a record added after the study began enters shadow first`,
        };
  };
}

function refusalFingerprint(entry: FileExample, reasons: readonly AdmissionReason[]): string {
  return createHash('sha256')
    .update(
      JSON.stringify({ file: entry.file, example: entry.example, reasons: reasons.map((reason) => reason.message) }),
    )
    .digest('hex')
    .slice(0, 16);
}

/** Two examples in different partitions whose texts (the task's text of their inputs) are the same request. */
export interface PartitionLeak {
  first: { id: string; partition: PartitionName; location: string };
  second: { id: string; partition: PartitionName; location: string };
  /** Word-bigram Jaccard distance, below the admission distance. */
  distance: number;
}

/**
 * Every pair of examples in different partitions whose texts are identical or
 * near-duplicates (bigram Jaccard distance < `below`, default
 * {@link NEAR_DUPLICATE_DISTANCE}), in corpus order. Such a pair leaks: the
 * proposer learns a shadow (or anchor) example through its twin in
 * optimization, or the gate counts one request twice.
 */
export function findPartitionLeaks(
  corpus: readonly Example[],
  locations: ReadonlyMap<string, string>,
  below: number = NEAR_DUPLICATE_DISTANCE,
): PartitionLeak[] {
  const index = new GoalIndex<Example>();
  const leaks: PartitionLeak[] = [];
  const where = (example: Example): { id: string; partition: PartitionName; location: string } => ({
    id: example.id,
    partition: example.partition,
    location: locations.get(example.id) ?? '(unknown file)',
  });
  for (const example of corpus) {
    for (const match of index.near(example.text, below)) {
      if (match.entry.partition !== example.partition)
        leaks.push({ first: where(match.entry), second: where(example), distance: match.distance });
    }
    index.add(example.text, example);
  }
  return leaks;
}

/**
 * Every leak between partitions of a study, each pair once, in two kinds:
 *
 * - two examples of the study (`corpus`, as the lifecycle has them, with
 *   `locations`) in different partitions: the proposer reads one while the
 *   gate holds the other out;
 * - two records of the corpus files (`admission.records`, admitted or
 *   refused) whose `partition` fields differ: the author wrote one request
 *   into two partitions. Which of the two it belongs to is the author's call,
 *   so the pair is an error even though the admission gate would refuse the
 *   later record; two records of one partition are no leak (the later one is
 *   refused as a near-duplicate and left out).
 *
 * The partitions named are the lifecycle's for the first kind, the files' for
 * the second.
 */
export function findStudyLeaks(
  corpus: readonly Example[],
  locations: ReadonlyMap<string, string>,
  admission?: FileAdmission,
  below: number = NEAR_DUPLICATE_DISTANCE,
): PartitionLeak[] {
  const leaks = findPartitionLeaks(corpus, locations, below);
  if (admission === undefined) return leaks;
  const key = (leak: PartitionLeak): string => [leak.first.id, leak.second.id].sort().join('\u0000');
  const seen = new Set(leaks.map(key));
  const fileLocations = new Map(
    admission.records.map(({ example, file, line }) => [example.id, locationOf(file, line) ?? file]),
  );
  for (const leak of findPartitionLeaks(
    admission.records.map((entry) => entry.example),
    fileLocations,
    below,
  )) {
    if (seen.has(key(leak))) continue;
    seen.add(key(leak));
    leaks.push(leak);
  }
  return leaks;
}

/**
 * The error a study with leaks between partitions raises when it is loaded
 * (code `partition_leak`, exit 2), naming both records of each leak (at most
 * five, then how many more).
 *
 * @param options `file`: where the error points (the study's kloop.yaml); `field` the record's input field (`goal`, `input`)
 */
export function partitionLeakError(
  leaks: readonly PartitionLeak[],
  options: { file: string; field?: string },
): InputError {
  const shown = leaks
    .slice(0, 5)
    .map((leak) => describeLeak(leak, options.field))
    .join('; ');
  const more = leaks.length > 5 ? ` (and ${leaks.length - 5} more)` : '';
  return new InputError(
    `the same request is in two partitions, which leaks one into the other: ${shown}${more}. Remove or reword one of each pair in the corpus files, or move one next to the other with \`kloop corpus promote\` (\`kloop corpus status\` lists the pairs)`,
    { file: options.file, field: 'corpus', code: 'partition_leak' },
  );
}

/**
 * One sentence naming both records of a leak.
 *
 * @param field what the texts are called: the record's input field (`goal` for intent studies, the default; `input` for the others)
 */
export function describeLeak(leak: PartitionLeak, field = 'goal'): string {
  const same =
    leak.distance === 0
      ? `the same ${field} text`
      : `near-duplicate ${field === 'goal' ? 'goals' : 'inputs'} (bigram Jaccard distance ${leak.distance.toFixed(3)} < ${NEAR_DUPLICATE_DISTANCE})`;
  return `${leak.first.location} "${leak.first.id}" (${leak.first.partition}) and ${leak.second.location} "${leak.second.id}" (${leak.second.partition}) have ${same}`;
}

/** A partition too small to mean anything. */
export interface PartitionSizeWarning {
  partition: 'shadow' | 'anchor';
  size: number;
  /** The smallest size that means something. */
  needed: number;
  message: string;
}

/**
 * The fewest shadow examples that mean anything at the shadow's level
 * `shadowAlpha`: the larger of {@link MIN_SHADOW_EXAMPLES} (the lifecycle's
 * floor) and ⌈log₂(1/shadowAlpha)⌉, the fewest paired examples with which an
 * exact paired test (McNemar's, the sign test, Wilcoxon's signed-rank) can
 * reach the level even when every example improves (`mcnemarMinimumPairs`;
 * the power check of src/calibration/power-check.ts uses the same bound): 5 at the
 * default 0.05, 7 at 0.01.
 */
export function minimumShadowExamples(shadowAlpha = 0.05): number {
  return Math.max(MIN_SHADOW_EXAMPLES, mcnemarMinimumPairs(shadowAlpha));
}

/**
 * Warnings for a shadow partition below {@link minimumShadowExamples} (too few
 * paired differences to confirm a gain; graduation and rotation also hold
 * there) or an anchor partition below {@link MIN_ANCHOR_EXAMPLES}, each with
 * the number of examples needed.
 *
 * @param options `shadowAlpha`: the gate's shadow level (default 0.05)
 */
export function partitionSizeWarnings(
  partitions: Readonly<Record<PartitionName, readonly unknown[]>>,
  options: { shadowAlpha?: number } = {},
): PartitionSizeWarning[] {
  const warnings: PartitionSizeWarning[] = [];
  const shadow = partitions.shadow.length;
  const neededShadow = minimumShadowExamples(options.shadowAlpha);
  if (shadow < neededShadow) {
    warnings.push({
      partition: 'shadow',
      size: shadow,
      needed: neededShadow,
      message: `the shadow partition holds ${shadow} example(s): fewer than ${neededShadow} paired differences cannot confirm a gain${neededShadow > MIN_SHADOW_EXAMPLES ? ` at shadowAlpha ${options.shadowAlpha}` : ''}${shadow <= MIN_SHADOW_EXAMPLES ? ', and nothing graduates from it' : ''}; add at least ${neededShadow - shadow} (kloop corpus add: admitted examples enter shadow)`,
    });
  }
  const anchor = partitions.anchor.length;
  if (anchor < MIN_ANCHOR_EXAMPLES) {
    warnings.push({
      partition: 'anchor',
      size: anchor,
      needed: MIN_ANCHOR_EXAMPLES,
      message: `the anchor partition holds ${anchor} example(s): fewer than ${MIN_ANCHOR_EXAMPLES} hand-chosen cases protect almost nothing; mark at least ${MIN_ANCHOR_EXAMPLES - anchor} more representative example${MIN_ANCHOR_EXAMPLES - anchor === 1 ? '' : 's'} "partition: anchor" in the corpus files (or kloop corpus promote --to anchor)`,
    });
  }
  return warnings;
}
