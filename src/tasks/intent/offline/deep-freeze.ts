/**
 * Freezes a value and everything reachable from it, in place (objects and
 * arrays; already frozen parts are not entered again). The playbook of a
 * source shared by its edits (playbook-edit.ts) and the entity readings shared
 * between them (extract.ts) are frozen so that no holder can change what the
 * others read.
 *
 * @returns the same value
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const entry of Object.values(value)) deepFreeze(entry);
  }
  return value;
}
