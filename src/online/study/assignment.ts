/**
 * Deterministic, sticky assignment of a unit to an arm.
 *
 * A unit's position is a hash of the study's salt, the experiment and the
 * unit id, read as a number u in [0, 1): the unit gets the candidate when
 * u < the candidate's share, else the incumbent. The same unit in the same
 * experiment always gets the same u; the first assignment is stored
 * (src/storage/online-store.ts), so a unit keeps its arm when the ramp moves.
 * Independent experiments get independent positions (the experiment id is
 * in the hash), so a unit's arm in one says nothing of its arm in the next.
 *
 * Source: the hashing assignment of GrowthBook and Statsig (a hash of salt +
 * unit id mapped to [0, 1) and compared with the split); here SHA-256, whose
 * first 48 bits give u with a resolution of 2⁻⁴⁸.
 */
import { createHash } from 'node:crypto';
import type { OnlineArm } from '../../storage/online-store.ts';

/** The study's assignment salt: derived from its seed, so a study folder is reproducible. */
export function assignmentSalt(seed: number): string {
  return createHash('sha256').update(`kloop-online-salt:${seed}`).digest('hex').slice(0, 16);
}

/** The unit's position in [0, 1) for an experiment. */
export function unitPosition(salt: string, experimentId: number, unit: string): number {
  const digest = createHash('sha256').update(`${salt}\u0000${experimentId}\u0000${unit}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** The arm of a unit: the candidate when its position is below the candidate's share, in (0, 1). */
export function armOf(salt: string, experimentId: number, unit: string, candidateShare: number): OnlineArm {
  return unitPosition(salt, experimentId, unit) < candidateShare ? 'candidate' : 'incumbent';
}
