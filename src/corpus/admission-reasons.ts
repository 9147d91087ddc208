/**
 * Two of the admission checks' reasons (src/corpus/admission-check.ts): an id
 * already taken, and a near-duplicate text.
 *
 * @module
 */
import type { AdmissionReason, AdmissionVerdict, CandidateRecord } from './admission-check.ts';
import type { PartitionName } from './example.ts';

/** An id used earlier in the batch or already in the study: a `duplicate_id` reason on `verdict`. The id joins the batch's. */
export function checkId(
  verdict: AdmissionVerdict,
  record: CandidateRecord,
  taken: { ids: ReadonlySet<string>; batchIds: Set<string> },
): void {
  const { ids, batchIds } = taken;
  if (record.id !== undefined) {
    if (batchIds.has(record.id))
      verdict.reasons.push({
        check: 'duplicate_id',
        field: 'id',
        message: `id "${record.id}" appears earlier in this batch`,
      });
    else if (ids.has(record.id))
      verdict.reasons.push({
        check: 'duplicate_id',
        field: 'id',
        relatedId: record.id,
        message: `id "${record.id}" is already used in this study`,
      });
    batchIds.add(record.id);
  }
}

/** The `near_duplicate` reason of a record whose text is within `threshold` of an example's (a leak when they are in different partitions). */
export function nearDuplicateReason(
  nearest: { entry: { id: string; partition: PartitionName; location?: string }; distance: number },
  placed: PartitionName,
  inputField: string,
  threshold: number,
): AdmissionReason {
  const { id, partition, location: where } = nearest.entry;
  const across = partition !== placed;
  return {
    check: 'near_duplicate',
    field: inputField,
    relatedId: id,
    relatedPartition: partition,
    ...(where !== undefined ? { relatedLocation: where } : {}),
    statistic: nearest.distance,
    message:
      `the ${inputField} ${nearest.distance === 0 ? 'is the same text as' : 'is a near-duplicate of'} "${id}" (${where !== undefined ? `${where}, ` : ''}${partition}; bigram Jaccard distance ${nearest.distance.toFixed(3)} < ${threshold})` +
      (across ? `: the same request in ${placed} and ${partition} would leak one partition into the other` : ''),
  };
}
