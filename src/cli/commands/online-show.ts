/**
 * `kloop show <study> <experiment>` on an online study: the experiment's
 * arms, units, lift and interval, its decision, and every check of its last
 * look with statistic, threshold and verdict (the online gate's evidence).
 * `--simulated` reads the notebook of the last `--simulate` run
 * (`.kloop/simulated.db`), labelled SIMULATED.
 */
import path from 'node:path';
import { InputError } from '../../errors.ts';
import { loadOnlineConfig } from '../../online/config.ts';
import { describeStandings } from '../../online/study/standing.ts';
import { simulatedClockEnd } from '../../online/study/online-view.ts';
import { databaseExists, openDatabase, studyDatabaseLocation } from '../../storage/database.ts';
import { getVersion } from '../../storage/registry.ts';
import { print, printJson } from '../output.ts';
import { checksTable, standingsTable } from './online-report.ts';

/** Prints one online experiment (text, or one JSON object with `json`). */
export async function showOnlineExperiment(
  studyDir: string,
  experiment: string,
  options: { json?: boolean; simulated?: boolean },
): Promise<void> {
  const id = Number(experiment);
  if (!Number.isInteger(id) || id < 1)
    throw new InputError(`experiment id must be a positive whole number, got "${experiment}"`, {
      field: '<experiment>',
    });
  const config = loadOnlineConfig(studyDir);
  const location =
    options.simulated === true ? path.join(config.dir, '.kloop', 'simulated.db') : studyDatabaseLocation(config.dir);
  if (!(await databaseExists(location)))
    throw new InputError(
      options.simulated === true
        ? 'no simulated run yet: run `kloop run <study> --simulate` first'
        : 'this study has no database yet: run `kloop run` first',
      { file: location },
    );
  const db = await openDatabase(location, { readonly: true });
  try {
    // A simulated run's clock stopped at its last step: the last experiment's start or decision.
    const standing = (
      await describeStandings(
        db,
        config,
        options.simulated === true ? await simulatedClockEnd(db) : new Date().toISOString(),
      )
    ).find((entry) => entry.id === id);
    if (standing === undefined)
      throw new InputError(`no online experiment ${id} in this study`, { field: '<experiment>' });
    const incumbent = (await getVersion(db, standing.incumbentVersionId))?.text ?? '';
    const candidate = (await getVersion(db, standing.candidateVersionId))?.text ?? '';
    const added = candidate.split('\n').filter((line) => !incumbent.split('\n').includes(line));
    const label = options.simulated === true ? 'SIMULATED — ' : '';
    if (options.json === true) {
      printJson({ mode: 'online', simulated: options.simulated === true, ...standing, added });
      return;
    }
    print(
      `${label}online experiment ${id} (${standing.kind === 'aa' ? 'A/A calibration' : 'A/B'}), started ${standing.startedAt}${standing.decidedAt === null ? '' : `, decided ${standing.decidedAt}`}`,
    );
    print(`${label}variant: ${standing.rationale}`);
    for (const line of added) print(`  + ${line}`);
    print(
      `${label}status: ${standing.status}${standing.reason === null ? ` (waiting for ${standing.waitingFor ?? 'its next look'})` : ` (${standing.reason})`}; looks: ${standing.looks}`,
    );
    print();
    print(standingsTable([standing]));
    print();
    print(
      standing.checks.length === 0
        ? `${label}no look yet: no unit's attribution window has closed`
        : checksTable(standing.checks),
    );
  } finally {
    await db.destroy();
  }
}
