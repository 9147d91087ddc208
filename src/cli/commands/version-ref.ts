/** Naming an artifact version on the command line: its id, `seed` or `active`. */
import { InputError } from '../../errors.ts';
import type { StudyDatabase } from '../../storage/study-database.ts';
import type { ArtifactVersion } from '../../storage/registry.ts';
import { getRegistryVersion, getVersion } from '../../storage/registry.ts';

/**
 * Resolves `seed`, `active` or a version id.
 *
 * @throws InputError naming `field` when it is neither, or no such version exists
 */
export async function resolveVersion(db: StudyDatabase, reference: string, field: string): Promise<ArtifactVersion> {
  const name = reference.trim().toLowerCase();
  if (name === 'seed' || name === 'active') {
    const version = await getRegistryVersion(db, name);
    if (version === undefined)
      throw new InputError(`this study has no ${name} version yet: run \`kloop run\` first`, { field });
    return version;
  }
  const id = Number(name.replace(/^v/, ''));
  if (!Number.isInteger(id) || id < 1)
    throw new InputError(
      `expected a version id (a whole number ≥ 1, as \`kloop history\` and the viewer list them), "seed" or "active"; got "${reference}"`,
      { field },
    );
  const version = await getVersion(db, id);
  if (version === undefined) throw new InputError(`no version ${id} in this study`, { field });
  return version;
}
