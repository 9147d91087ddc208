/**
 * `kloop view <study>`: the local web viewer (src/view/view-server.ts) on
 * 127.0.0.1. Read-only unless a bearer token is set in KLOOP_VIEW_TOKEN (or
 * the variable named by `--token-env`): the rules of `kloop serve`, at least
 * 16 characters, never on the command line. With the token, the pages can
 * activate a version (a rollback) and decide review items, each recorded
 * with the name given. Runs until Ctrl-C or SIGTERM.
 */
import { isIntentStudy } from '../../study/compose.ts';
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import type { StudyDatabase } from '../../storage/study-database.ts';
import { databaseExists, openDatabase, studyDatabaseLocation, studyDatabasePath } from '../../storage/database.ts';
import { createNotebookFolder } from '../../storage/notebook-folder.ts';
import { isPostgresUrl } from '../../storage/location.ts';
import { headlineOfConfig, loadConfigOrNotebook } from './study-session.ts';
import { listenFailure } from '../listen-error.ts';
import { progress } from '../output.ts';
import { gitNotebookEnabled, syncGitNotebook } from './git-notebook.ts';
import { isStudyWritable } from './study-session.ts';
import { untilInterrupted } from '../session/until-interrupted.ts';
import { LOOPBACK, parseEnvName, parsePort } from '../server-options.ts';
import path from 'node:path';
import { loadOnlineConfig, studyModeOf, type OnlineStudyConfig } from '../../online/config.ts';
import type { StudyConfig } from '../../config/config.ts';

/** The default environment variable holding the viewer's bearer token. */
export const DEFAULT_VIEW_TOKEN_ENV = 'KLOOP_VIEW_TOKEN';
const DEFAULT_PORT = 8790;

interface ViewOptions {
  port: number;
  host: string;
  tokenEnv: string;
  git?: boolean;
  quiet?: boolean;
  simulated?: boolean;
}

/**
 * An online study's config, when the folder is one (`mode: online`), else null.
 *
 * @throws InputError for `--simulated` on an offline study, or a simulated run that has not happened
 */
async function onlineStudyOf(studyDir: string, simulated: boolean): Promise<OnlineStudyConfig | null> {
  const online = existsSync(path.join(studyDir, 'kloop.yaml')) && studyModeOf(studyDir) === 'online';
  if (!online && simulated)
    throw new InputError('--simulated applies to online studies only (mode: online)', { field: '--simulated' });
  if (!online) return null;
  const config = loadOnlineConfig(studyDir);
  if (simulated && !(await databaseExists(simulatedNotebook(config.dir))))
    throw new InputError('no simulated run yet: run `kloop run <study> --simulate` first', {
      file: simulatedNotebook(config.dir),
    });
  return config;
}

/** The notebook of the last `kloop run --simulate` (src/online/simulate/simulate-study.ts). */
const simulatedNotebook = (dir: string): string => path.join(dir, '.kloop', 'simulated.db');

/**
 * Opens the study database for the viewer: writable when possible (activation,
 * review), else read-only. A study that never ran gets its (empty) notebook
 * created, with the `.kloop/.gitignore`, so the viewer can follow the first run.
 */
async function openViewerDatabase(
  studyDir: string,
): Promise<{ db: StudyDatabase; writable: boolean; created: boolean }> {
  const location = studyDatabaseLocation(studyDir);
  if (isPostgresUrl(location)) {
    const created = !(await databaseExists(location));
    return { db: await openDatabase(location), writable: true, created };
  }
  const file = studyDatabasePath(studyDir);
  const created = !existsSync(file);
  // A study this process may not write (another user's, read-only media): read it, and refuse every change up front.
  if (!created && !isStudyWritable(studyDir))
    return { db: await openDatabase(file, { readonly: true }), writable: false, created };
  if (created) {
    try {
      createNotebookFolder(file);
    } catch (error) {
      throw new InputError(
        `this study has no notebook yet and it cannot be created (${(error as NodeJS.ErrnoException).code ?? 'not writable'}): run \`kloop run\` first`,
        { file },
      );
    }
  }
  try {
    return { db: await openDatabase(file), writable: true, created };
  } catch (error) {
    if (created) throw error;
    return { db: await openDatabase(file, { readonly: true }), writable: false, created };
  }
}

export function registerViewCommand(program: Command): void {
  program
    .command('view')
    .description(
      "Open a local web viewer of a study on 127.0.0.1: the composite over experiments, every experiment's checks and per-example changes, " +
        "versions side by side and rollback, the corpus lifecycle, the review queue and Loop D's signals; it updates while a run is in progress. " +
        `Read-only unless ${DEFAULT_VIEW_TOKEN_ENV} (or --token-env NAME) holds a bearer token of 16+ characters.`,
    )
    .argument('<study>', 'study folder')
    .option('--port <n>', 'port to listen on (0 = any free port)', parsePort, DEFAULT_PORT)
    .option('--host <address>', 'interface to listen on', '127.0.0.1')
    .option(
      '--token-env <NAME>',
      'environment variable holding the bearer token that unlocks rollback and review decisions',
      parseEnvName,
      DEFAULT_VIEW_TOKEN_ENV,
    )
    .option('--git', 'commit activations to the git notebook (as notebook.git: true in kloop.yaml)')
    .option('--quiet', 'no progress lines on stderr')
    .option('--json', 'print one JSON line on stdout once the viewer listens: url, port, study, writable')
    .option(
      '--simulated',
      'online studies: view the notebook of the last `kloop run --simulate` (.kloop/simulated.db), labelled SIMULATED',
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 stopped by Ctrl-C or SIGTERM; 1 the notebook cannot be read; 2 bad input: no study there, a bad --port or one in use, a --host not of this machine, a token too short or unset.' +
        `\nExamples:\n  kloop view examples/intent\n  KLOOP_VIEW_TOKEN=$(openssl rand -hex 16) kloop view examples/intent --port 8800`,
    )
    .action(viewCommand);
}

/** `kloop view`'s action: serves the study's viewer on this machine until Ctrl-C or SIGTERM. */
async function viewCommand(studyDir: string, options: ViewOptions, command: Command): Promise<void> {
  const { startViewServer } = await import('../../view/view-server.ts');
  const { resolveServeToken } = await import('../../signals/server.ts');
  const { runLoopD } = await import('../../signals/loops.ts');
  const { slowLoopInputs } = await import('./signals.ts');
  const quiet = options.quiet === true;
  const simulated = options.simulated === true;
  const online = await onlineStudyOf(studyDir, simulated);
  const { dir, config } = online !== null ? { dir: online.dir, config: null } : await loadConfigOrNotebook(studyDir);
  const explicitTokenEnv = command.getOptionValueSource('tokenEnv') !== 'default';
  const token =
    explicitTokenEnv || (process.env[options.tokenEnv] ?? '').trim() !== ''
      ? resolveServeToken(process.env, options.tokenEnv)
      : null;
  // A simulated run's notebook is read, never changed (it is made afresh by each --simulate run).
  const { db, writable, created } = simulated
    ? { db: await openDatabase(simulatedNotebook(dir), { readonly: true }), writable: false, created: false }
    : await openViewerDatabase(dir);
  if (created) progress(`kloop: ${dir} has not run yet: the viewer shows the first \`kloop run\` as it goes`, quiet);
  const mirror = config !== null && gitNotebookEnabled(config, options.git) ? config : null;
  try {
    const readOnlyNotebook = readOnlyNotice(simulated, writable, dir);
    if (!writable) progress(`kloop: ${readOnlyNotebook}`, quiet);
    const server = await startViewServer({
      db,
      studyDir: dir,
      headline: headlineOfConfig(config),
      token,
      ...(readOnlyNotebook !== undefined ? { readOnlyNotebook } : {}),
      ...(online !== null
        ? {
            loadOnline: async () =>
              (await import('../../online/study/online-view.ts')).loadOnlineView(db, online, { simulated }),
            simulated,
          }
        : {}),
      port: options.port,
      hostname: options.host,
      ...(config !== null ? { corpusPolicy: viewedCorpusPolicy(config) } : {}),
      // Loop D reads intents: the signals of other tasks' studies are not available.
      ...(config !== null && isIntentStudy(config)
        ? {
            loadSignals: async () =>
              (await runLoopD({ ...(await slowLoopInputs(config, db, new Date())), enqueue: false })).report,
          }
        : {}),
      ...(mirror !== null
        ? {
            afterActivation: async () => {
              const synced = await syncGitNotebook(db, mirror);
              if (synced.commits.length > 0)
                progress(`kloop: git notebook: ${synced.commits.length} commit(s) in ${synced.dir}`, quiet);
            },
          }
        : {}),
    }).catch((error: unknown) => {
      throw listenFailure(error, options.host, options.port);
    });
    if (!LOOPBACK.has(options.host))
      progress(
        `kloop: WARNING: listening on ${options.host}, beyond this machine; the viewer speaks plain HTTP: put a TLS proxy in front`,
        quiet,
      );
    progress(
      `kloop: viewer for ${dir} at ${server.url}/ — ${viewerMode(writable, token !== null, options.tokenEnv)}; Ctrl-C to stop`,
      quiet,
    );
    if ((options as { json?: boolean }).json === true)
      process.stdout.write(
        `${JSON.stringify({ url: `${server.url}/`, port: Number(new URL(server.url).port), study: dir, writable: token !== null && writable })}\n`,
      );
    await untilInterrupted();
    progress('kloop: stopping the viewer', quiet);
    await server.close();
  } finally {
    await db.destroy();
  }
}

/** Why the viewer cannot change the notebook (a simulated run's; one this user cannot write), or undefined when it can. */
function readOnlyNotice(simulated: boolean, writable: boolean, dir: string): string | undefined {
  if (simulated) return 'this is the notebook of a SIMULATED run (kloop run --simulate): nothing in it can be changed';
  return writable
    ? undefined
    : `the study's notebook ${studyDatabasePath(dir)} is not writable by this viewer: activation and review decisions cannot be recorded (run kloop view as a user who may write the study)`;
}

/** What the viewer may change, for its start line: nothing (a read-only notebook, or no token), or changes with the bearer token. */
function viewerMode(writable: boolean, hasToken: boolean, tokenEnv: string): string {
  if (!writable) return 'read-only (the notebook is not writable)';
  return hasToken
    ? `changes need the bearer token from ${tokenEnv}`
    : `read-only (set ${tokenEnv} to allow rollback and review decisions)`;
}

/** The corpus policy the viewer's corpus page explains: when shadow examples graduate and when the shadow rotates. */
function viewedCorpusPolicy(config: StudyConfig): {
  graduateAfterDecisions: number;
  maxShadowExposures: number;
  rotateSlice: number;
} {
  return {
    graduateAfterDecisions: config.corpusPolicy.graduateAfterDecisions,
    maxShadowExposures: config.corpusPolicy.maxShadowExposures,
    rotateSlice: config.corpusPolicy.rotateSlice,
  };
}
