/**
 * `kloop doctor`: is the study's database sound, and is the study set up the
 * way the seed's Quick Checklist asks (seeds/002 "Quick Checklist": a metric
 * measured automatically, 15–25 or more seed examples, a program with three
 * registers, invariants listed, the metric scraper built and tested, fast and
 * slow loop schedules set, results logged to git or a structured database,
 * stopping criteria defined)? Every check works through the task contract,
 * for any task; plus the power check `kloop run` makes before round 1.
 *
 * Every finding says what to fix. Read-only: the database is opened read-only
 * and nothing is written (the incumbent is evaluated into a scratch database
 * in memory).
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { hostname as osHostname } from 'node:os';
import { parse as parseYaml } from 'yaml';
import { contentHash } from '../artifact/content-hash.ts';
import { PARTITIONS } from '../corpus/example.ts';
import { isKloopError } from '../errors.ts';
import type { Program } from '../program/program.ts';
import { loadProgram } from '../program/program.ts';
import type { StudyDatabase } from '../storage/database.ts';
import { backendOf, databaseExists, listTables } from '../storage/database.ts';
import {
  countDanglingRows,
  countStoredOutcomes,
  readAcceptedTwice,
  readDanglingPointers,
  readDecidedTwice,
  readIntegrityMessages,
  readUnfinishedRuns,
  readVersionContents,
} from '../storage/notebook/doctor-queries.ts';
import { isPostgresUrl } from '../storage/location.ts';
import { LEASE_STALE_AFTER_MS, isProcessAlive, listLeases, staleReason } from '../storage/lease.ts';
import type { StudyConfig } from '../config/config.ts';
import { CONFIG_FILE_NAME, loadStudyConfig } from '../config/config.ts';
import {
  checkPromptTemplate,
  loadCorpus,
  loadCorpusFiles,
  loadStudyAsync,
  resolveStudyCorpus,
} from '../study/load-study.ts';
import type { Proposer } from '../proposers/proposer.ts';
import { getRegistryVersion } from '../storage/registry.ts';
import { createStudyEvaluator, evaluatePartition } from '../loop/evaluate-partition.ts';
import { openDatabase } from '../storage/database.ts';
import type { PowerWarning } from '../calibration/power-check.ts';
import { notebookPowerWarnings, studyPowerWarnings } from '../calibration/power-check.ts';
import { describeLeak, partitionSizeWarnings } from '../corpus/file-admission.ts';
import { NEAR_DUPLICATE_DISTANCE } from '../corpus/admission.ts';
import type { ComposedTask } from '../study/compose.ts';
import {
  composeHeadline,
  composeTask,
  composeTaskAsync,
  composeWeights,
  isIntentStudy,
  taskKindOf,
} from '../study/compose.ts';
import { DEFAULT_FAST_CADENCE, DEFAULT_SLOW_CADENCE } from '../config/config.ts';
import { maskSecrets } from '../text/mask-secrets.ts';
import { hasCandidateIdentities, undecidedCandidateFindings } from './undecided-candidates.ts';
import { proposerFitProblem } from './proposer-fit.ts';

/** The smallest corpus the seed's checklist accepts ("15–25 seed examples"). */
export const MIN_SEED_EXAMPLES = 15;

/** One finding. `problem` makes the study unhealthy (exit 1); `info` does not. */
export interface DoctorFinding {
  /** Stable id, e.g. `database.integrity`, `setup.seed-examples`. */
  id: string;
  area: 'database' | 'setup' | 'notebook';
  status: 'ok' | 'problem' | 'info';
  message: string;
  /** What to do about a problem. */
  fix?: string;
}

export interface DoctorReport {
  study: string;
  database: string | null;
  healthy: boolean;
  findings: DoctorFinding[];
}

/** Options of {@link checkDatabase}. */
export interface DatabaseCheckOptions {
  now?: () => Date;
  hostname?: string;
  isProcessAlive?: (pid: number) => boolean;
  staleAfterMs?: number;
}

async function tableNames(db: StudyDatabase): Promise<Set<string>> {
  return listTables(db);
}

/**
 * Checks a study database: SQLite's integrity check, orphaned and dangling
 * records, content hashes, decisions made twice, and leases held by dead
 * processes.
 */
export async function checkDatabase(db: StudyDatabase, options: DatabaseCheckOptions = {}): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  const add = (finding: Omit<DoctorFinding, 'area'>): void => void findings.push({ area: 'database', ...finding });

  // PostgreSQL keeps its own storage sound (no file to check); SQLite's check reads every page.
  const messages = await readIntegrityMessages(db);
  if (messages.length === 1 && messages[0] === 'ok')
    add({
      id: 'database.integrity',
      status: 'ok',
      message:
        backendOf(db) === 'postgres'
          ? "PostgreSQL notebook: its integrity is the server's (no file to check)"
          : 'SQLite integrity check: ok',
    });
  else {
    add({
      id: 'database.integrity',
      status: 'problem',
      message: `SQLite integrity check failed: ${messages.slice(0, 5).join('; ')}${messages.length > 5 ? ` (and ${messages.length - 5} more)` : ''}`,
      fix: 'restore the database from a backup, or `sqlite3 kloop.db ".recover"` into a new file and keep the old one',
    });
    return findings; // the other queries would read damaged pages
  }

  const tables = await tableNames(db);
  const required = ['artifact_versions', 'registry', 'experiments', 'evaluations', 'evaluation_examples', 'runs'];
  const missing = required.filter((name) => !tables.has(name));
  if (missing.length > 0) {
    add({
      id: 'database.schema',
      status: 'problem',
      message: `tables missing: ${missing.join(', ')}`,
      fix: 'this is not a kloop study database, or it was never migrated: run `kloop run` once',
    });
    return findings;
  }

  const counts = await countDanglingRows(db);
  const orphans = counts.orphanedExamples;
  add(
    orphans === 0
      ? { id: 'database.orphaned-examples', status: 'ok', message: 'every per-example score belongs to an evaluation' }
      : {
          id: 'database.orphaned-examples',
          status: 'problem',
          message: `${orphans} per-example scores (evaluation_examples) belong to no evaluation`,
          fix: 'delete them: `delete from evaluation_examples where evaluation_id not in (select id from evaluations)`; they are never read',
        },
  );

  const incomplete = counts.emptyEvaluations;
  add(
    incomplete === 0
      ? {
          id: 'database.empty-evaluations',
          status: 'ok',
          message: 'every stored evaluation has its per-example scores',
        }
      : {
          id: 'database.empty-evaluations',
          status: 'problem',
          message: `${incomplete} evaluations have no per-example scores`,
          fix: 'delete those evaluations; the next run evaluates them again',
        },
  );

  const danglingBase = counts.missingBase;
  const danglingAccepted = counts.missingAccepted;
  const acceptedWithoutVersion = counts.acceptedWithoutVersion;
  const dangling = danglingBase + danglingAccepted + acceptedWithoutVersion;
  add(
    dangling === 0
      ? { id: 'database.experiment-versions', status: 'ok', message: 'every experiment points to stored versions' }
      : {
          id: 'database.experiment-versions',
          status: 'problem',
          message: `${danglingBase} experiments name a missing base version, ${danglingAccepted} a missing accepted version, ${acceptedWithoutVersion} accepted experiments have no version`,
          fix: 'the lab notebook lost versions: restore the database from a backup',
        },
  );

  const danglingRegistry = await readDanglingPointers(db);
  const hasActive = counts.activePointers;
  if (danglingRegistry.length > 0) {
    add({
      id: 'database.registry',
      status: 'problem',
      message: `registry pointers to missing versions: ${danglingRegistry.map((row) => `${row.name} → ${row.versionId}`).join(', ')}`,
      fix: "point them at a stored version (the last accepted one: `select max(id) from artifact_versions where source = 'accepted'`)",
    });
  } else
    add({
      id: 'database.registry',
      status: hasActive > 0 ? 'ok' : 'info',
      message: hasActive > 0 ? 'the registry points to stored versions' : 'no active version yet (no run so far)',
    });

  const versions = await readVersionContents(db);
  const corrupted = versions
    .filter((version) => contentHash(version.text) !== version.hash)
    .map((version) => version.id);
  add(
    corrupted.length === 0
      ? {
          id: 'database.version-hashes',
          status: 'ok',
          message: `${versions.length} artifact versions match their content hashes`,
        }
      : {
          id: 'database.version-hashes',
          status: 'problem',
          message: `artifact versions ${corrupted.join(', ')} do not match their content hashes`,
          fix: 'restore the database from a backup; do not export those versions',
        },
  );

  // One decision per candidate: by its identity (two candidates of a round may share a delta text); by delta for rows older than identities.
  const twice = await readDecidedTwice(db, await hasCandidateIdentities(db));
  const acceptedTwice = await readAcceptedTwice(db);
  add(
    twice.length === 0 && acceptedTwice.length === 0
      ? {
          id: 'database.decided-once',
          status: 'ok',
          message: 'no experiment was decided twice and no version accepted twice',
        }
      : {
          id: 'database.decided-once',
          status: 'problem',
          message: [
            ...twice.map((row) => `round ${row.round} decided "${row.delta}" ${row.times} times`),
            ...acceptedTwice.map((row) => `version ${row.version} was accepted ${row.times} times`),
          ].join('; '),
          fix: 'two writers ran at once or a resumed round decided again: keep the first decision (lowest id) and report the bug',
        },
  );

  for (const finding of await undecidedCandidateFindings(db)) add(finding);

  const unfinished = await readUnfinishedRuns(db);
  if (tables.has('leases')) {
    const now = (options.now ?? (() => new Date()))();
    const judge = {
      now,
      staleAfterMs: options.staleAfterMs ?? LEASE_STALE_AFTER_MS,
      hostname: options.hostname ?? osHostname(),
      isProcessAlive: options.isProcessAlive ?? isProcessAlive,
    };
    const leases = await listLeases(db);
    if (leases.length === 0) add({ id: 'database.lease', status: 'ok', message: 'no run holds the study' });
    for (const lease of leases) {
      const stale = staleReason(lease, judge);
      add(
        stale === null
          ? {
              id: 'database.lease',
              status: 'info',
              message: `a run is in progress: pid ${lease.pid} on host ${lease.hostname} since ${lease.acquiredAt} (heartbeat ${lease.heartbeatAt})`,
            }
          : {
              id: 'database.lease',
              status: 'problem',
              message: `the lease is held by a dead run: pid ${lease.pid} on host ${lease.hostname} since ${lease.acquiredAt}; ${stale}`,
              fix: "nothing to do by hand: the next `kloop run` takes a dead run's lease over and continues where it stopped",
            },
      );
    }
    if (unfinished.length > 0) {
      const running = leases.some((lease) => staleReason(lease, judge) === null);
      add({
        id: 'database.unfinished-runs',
        status: 'info',
        message: `${unfinished.length} run(s) never recorded a stop (${unfinished.map((run) => `#${run.id} started ${run.startedAt}`).join(', ')})${running ? '; the latest may be the one in progress' : ': killed or crashed; the next run finishes their open round exactly'}`,
      });
    }
  }
  return findings;
}

function settle<T>(work: () => T): { ok: true; value: T } | { ok: false; message: string } {
  try {
    return { ok: true, value: work() };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Checks a study folder against the seed's Quick Checklist. Each load step is
 * tried on its own, so one broken file does not hide the other findings.
 */
export function checkSetup(
  studyDir: string,
  options: { hasDatabase: boolean; composed?: ComposedTask | { error: string } },
): DoctorFinding[] {
  const findings: DoctorFinding[] = [];
  const add = (finding: Omit<DoctorFinding, 'area'>): void => void findings.push({ area: 'setup', ...finding });

  const loadedConfig = settle(() => loadStudyConfig(studyDir));
  if (!loadedConfig.ok) {
    add({
      id: 'setup.config',
      status: 'problem',
      message: loadedConfig.message,
      fix: `fix ${CONFIG_FILE_NAME} at the line named`,
    });
    return findings;
  }
  const config: StudyConfig = loadedConfig.value;
  add({ id: 'setup.config', status: 'ok', message: `${CONFIG_FILE_NAME} is valid` });

  const given = options.composed;
  const composed =
    given === undefined
      ? settle(() => composeTask(config))
      : 'error' in given
        ? { ok: false as const, message: given.error }
        : { ok: true as const, value: given };
  const metric = composed.ok
    ? settle(() => ({ task: composed.value.task, weights: composeWeights(composed.value.task, config) }))
    : composed;
  if (!metric.ok) {
    add({
      id: 'setup.metric',
      status: 'problem',
      message: metric.message,
      fix: `fix the task or weights in ${CONFIG_FILE_NAME} at the line named`,
    });
  } else {
    const weighted = Object.entries(metric.value.weights)
      .filter(([, weight]) => weight > 0)
      .map(([name]) => name);
    const headline = composeHeadline(metric.value.task);
    const test =
      metric.value.task.outcome === 'binary'
        ? "right/wrong outcomes, McNemar's exact test"
        : 'continuous scores, the paired t-test';
    add({
      id: 'setup.metric',
      status: 'ok',
      message:
        `metric identified and automated: the ${taskKindOf(config.task)} scorer's composite (${metric.value.task.id}) over ${weighted.length} weighted component${weighted.length === 1 ? '' : 's'} (${weighted.join(', ')})` +
        `${headline.complement ? `, reported as ${headline.name} (1 − composite)` : ''}; ${test}; executor ${config.executor.kind}${config.executor.model !== undefined ? ` (${config.executor.model})` : ''}`,
    });
  }

  const loadedProgram = settle((): Program => loadProgram(config.program));
  if (!loadedProgram.ok) {
    add({
      id: 'setup.program',
      status: 'problem',
      message: loadedProgram.message,
      fix: 'write program.md with three headed registers: Instructions, Constraints (the invariants), Stopping criteria',
    });
  } else {
    const program = loadedProgram.value;
    add({
      id: 'setup.program',
      status: 'ok',
      message: `program.md has the three registers (lines ${program.lines.instructions}, ${program.lines.constraints}, ${program.lines.stopping})`,
    });
    const mechanical = program.mechanical;
    const checked =
      (mechanical.editableSections?.length ?? 0) +
      (mechanical.requiredText?.length ?? 0) +
      (mechanical.forbiddenText?.length ?? 0);
    add(
      checked > 0
        ? {
            id: 'setup.invariants',
            status: 'ok',
            message: `invariants listed: the Constraints register, with ${checked} mechanical checks code applies to every candidate`,
          }
        : {
            id: 'setup.invariants',
            status: 'info',
            message:
              'invariants listed in prose only: the Constraints register has no mechanical check (editableSections, requiredText, forbiddenText), so code enforces only the length ceiling',
            fix: 'add a ```yaml block to the Constraints register listing what must not change: editableSections (the artifact sections a candidate may edit), requiredText, forbiddenText (`kloop init` writes one for every task)',
          },
    );
  }

  const rawConfig = settle(
    () => (parseYaml(readFileSync(config.configPath, 'utf8')) as Record<string, unknown> | null) ?? {},
  );
  const rawStopping = rawConfig.ok
    ? (rawConfig.value.stopping as Record<string, unknown> | null | undefined)
    : undefined;
  const explicit =
    rawStopping !== undefined && rawStopping !== null && typeof rawStopping === 'object'
      ? Object.keys(rawStopping)
      : [];
  add(
    explicit.length > 0
      ? {
          id: 'setup.stopping',
          status: 'ok',
          message: `stopping criteria defined: ${explicit.map((key) => `stopping.${key}`).join(', ')} (and the program's Stopping criteria register)`,
        }
      : {
          id: 'setup.stopping',
          status: 'problem',
          message: `${CONFIG_FILE_NAME} sets no stopping criterion: the run relies on defaults (maxExperiments ${config.stopping.maxExperiments}, plateauRounds ${config.stopping.plateauRounds})`,
          fix: `add a stopping section to ${CONFIG_FILE_NAME} (maxExperiments, plateauRounds, target, maxCostUsd)`,
        },
  );

  const loadedCorpus = composed.ok ? settle(() => loadCorpusFiles(config, composed.value.exampleFormat)) : composed;
  if (!loadedCorpus.ok) {
    add({
      id: 'setup.corpus',
      status: 'problem',
      message: loadedCorpus.message,
      fix: 'fix the corpus file at the line and field named',
    });
  } else {
    const corpus = loadedCorpus.value.map((entry) => entry.example);
    const byPartition = Object.fromEntries(
      PARTITIONS.map((name) => [name, corpus.filter((example) => example.partition === name).length]),
    );
    add(
      corpus.length >= MIN_SEED_EXAMPLES
        ? {
            id: 'setup.seed-examples',
            status: 'ok',
            message: `${corpus.length} seed examples (${PARTITIONS.map((name) => `${name} ${byPartition[name]}`).join(', ')})`,
          }
        : {
            id: 'setup.seed-examples',
            status: 'problem',
            message: `only ${corpus.length} seed examples; the checklist asks for ${MIN_SEED_EXAMPLES}–25 or more`,
            fix: 'collect more real, labelled examples before running the loop (`kloop corpus add` or the corpus files)',
          },
    );
    const empty = PARTITIONS.filter((name) => byPartition[name] === 0);
    if (empty.length > 0) {
      add({
        id: 'setup.partitions',
        status: 'problem',
        message: `no example in the ${empty.join(', ')} partition(s)`,
        fix: 'give every example a partition: optimization, anchor and shadow each need some',
      });
    }
    // The partitions as a run would have them (the corpus lifecycle, admission of new records): leaks and sizes.
    const format = composed.ok ? composed.value.exampleFormat : undefined;
    const state =
      format === undefined ? undefined : settle(() => resolveStudyCorpus(config, loadedCorpus.value, format));
    if (state !== undefined && state.ok && format !== undefined) {
      const { leaks, partitions } = state.value;
      add(
        leaks.length === 0
          ? {
              id: 'setup.partition-leaks',
              status: 'ok',
              message: `no ${format.inputField} is in two partitions (identical or near-duplicate: bigram Jaccard distance < ${NEAR_DUPLICATE_DISTANCE})`,
            }
          : {
              id: 'setup.partition-leaks',
              status: 'problem',
              message: `${leaks.length} ${format.inputField}(s) in two partitions, which leaks one into the other (kloop run refuses to start): ${leaks
                .slice(0, 5)
                .map((leak) => describeLeak(leak, format.inputField))
                .join('; ')}${leaks.length > 5 ? ` (and ${leaks.length - 5} more)` : ''}`,
              fix: 'remove or reword one of each pair in the corpus files, or move one next to the other with `kloop corpus promote`',
            },
      );
      for (const warning of partitionSizeWarnings(partitions, { shadowAlpha: config.gate.shadowAlpha })) {
        add({
          id: `setup.partition-size.${warning.partition}`,
          status: 'info',
          message: warning.message,
          fix:
            warning.partition === 'shadow'
              ? 'admit new examples (`kloop corpus add`): they enter the shadow partition'
              : 'mark representative examples `partition: anchor` in the corpus files',
        });
      }
    }
  }

  findings.push(...scheduleFindings(config, rawConfig.ok ? rawConfig.value : undefined));

  const git = config.notebook?.git === true ? ', mirrored as git commits in .kloop/notebook (notebook.git)' : '';
  add(
    options.hasDatabase
      ? {
          id: 'setup.results-log',
          status: 'ok',
          message: `results are logged to the study database (.kloop/kloop.db)${git}`,
        }
      : {
          id: 'setup.results-log',
          status: 'info',
          message: `no study database yet: \`kloop run\` creates it${git !== '' ? ` (and the git mirror: notebook.git)` : ''}`,
        },
  );
  return findings;
}

/**
 * The seed's "fast loop schedule set (generation cadence)" and "slow loop
 * schedule set (analysis cadence)": `schedule:` in kloop.yaml, which
 * `kloop schedule` runs (src/schedule/schedule.ts). The fast loop is Loop B, the
 * optimization loop, for every task. The slow loops A, C and D build apps
 * from intents, so they run for intent studies only; for any other task the
 * slow loop is the analysis the seed asks of the people (read `kloop history`
 * and `kloop report` in batches, revise program.md's Instructions), and the
 * finding says so. A note (`info`) when left to the defaults, never a
 * problem: `kloop run` by hand needs no schedule.
 */
function scheduleFindings(config: StudyConfig, raw: Record<string, unknown> | undefined): DoctorFinding[] {
  const written = (raw?.schedule ?? {}) as { fast?: unknown; slow?: unknown; loops?: Record<string, unknown> };
  const schedule = config.schedule;
  const fastSet = written.fast !== undefined || written.loops?.B !== undefined;
  const fast = schedule?.loops.B ?? schedule?.fast ?? DEFAULT_FAST_CADENCE;
  const slow = schedule?.slow ?? DEFAULT_SLOW_CADENCE;
  const intent = isIntentStudy(config);
  const slowSet =
    written.slow !== undefined || (intent && ['A', 'C', 'D'].some((loop) => written.loops?.[loop] !== undefined));
  const fastText =
    fast === 'off'
      ? 'the fast loop (B, optimization) is off (schedule.loops.B)'
      : `the fast loop (B, optimization) runs at "${fast}"${fastSet ? '' : ' (the default)'}`;
  const slowText = intent
    ? `the slow loops (A, C, D: analysis) at "${slow}"${slowSet ? '' : ' (the default)'}`
    : `the slow loop is your analysis: Loops A, C and D build apps from intents and skip a ${taskKindOf(config.task)} study, so read kloop history and kloop report in batches at your own cadence${slowSet ? ` (schedule.slow "${slow}" records it)` : ''} and revise program.md's Instructions`;
  const set = fastSet && (slowSet || !intent);
  return [
    {
      id: 'setup.schedule',
      area: 'setup',
      status: set ? 'ok' : 'info',
      message: `schedule (kloop schedule): ${fastText}; ${slowText}`,
      ...(set
        ? {}
        : {
            fix: `set the cadences in ${CONFIG_FILE_NAME}: schedule: { fast: "0 * * * *"${intent ? ', slow: "0 3 * * 1"' : ''} } (cron; \`kloop schedule\` runs them)`,
          }),
    },
  ];
}

/** Every finding of a study: set-up, then database. */
export async function diagnoseStudy(
  studyDir: string,
  databaseFile: string,
  openReadOnly: (file: string) => Promise<StudyDatabase>,
  options: DatabaseCheckOptions = {},
): Promise<DoctorReport> {
  // A PostgreSQL notebook (src/storage/location.ts): no file to find or to check the permissions of.
  const postgres = isPostgresUrl(databaseFile);
  const hasDatabase = postgres ? await databaseExists(databaseFile) : existsSync(databaseFile);
  // A custom task's scorer module loads asynchronously: composed here, checked with the rest of the set-up.
  // A custom task's scorer module that does not load is reported with its own message (the file named).
  const composed: ComposedTask | { error: string } = await (async () =>
    composeTaskAsync(loadStudyConfig(studyDir)))().catch((error: unknown) => ({
    error: error instanceof Error ? error.message : String(error),
  }));
  const findings = checkSetup(studyDir, { hasDatabase, composed });
  // The power check only on a study that loads: the set-up findings name whatever keeps it from loading.
  if (
    !('error' in composed) &&
    findings.every((finding) => finding.status !== 'problem' || finding.id === 'setup.seed-examples')
  ) {
    findings.push(...(await checkMeasurement(studyDir, { databaseFile, hasDatabase, openReadOnly })));
  }
  // After the measurement: a proposer that cannot read the artifact keeps no instrument from being tested.
  findings.push(...proposerFindings(studyDir));
  if (hasDatabase) {
    const readable = postgres || canAccess(databaseFile, constants.R_OK);
    const writable =
      postgres || (canAccess(databaseFile, constants.W_OK) && canAccess(path.dirname(databaseFile), constants.W_OK));
    if (!readable) {
      findings.push({
        area: 'database',
        id: 'database.access',
        status: 'problem',
        message: `the study database ${databaseFile} is not readable by this user (permissions), so it was not checked; nothing says it is damaged`,
        fix: "run as the study's owner, or give this user read permission on the file and its folder",
      });
      return report(studyDir, databaseFile, findings);
    }
    if (!writable) {
      findings.push({
        area: 'database',
        id: 'database.access',
        status: 'info',
        message: `the study is read-only for this user (${databaseFile} or its folder cannot be written): the read-only commands (status, history, show, eval, export --out, doctor) work; kloop run, calibrate and corpus add need write access`,
        fix: 'to run the loop here, make .kloop/ and kloop.db writable, or copy the study to a writable folder',
      });
    }
    let db: StudyDatabase | undefined;
    try {
      db = await openReadOnly(databaseFile);
      findings.push(...(await checkDatabase(db, options)));
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause ?? (error as { code?: string });
      const damaged = typeof cause.code === 'string' && /^SQLITE_(NOTADB|CORRUPT)/.test(cause.code);
      findings.push({
        area: 'database',
        id: 'database.open',
        status: 'problem',
        message: `${damaged ? 'the study database is damaged' : 'cannot read the study database'}: ${(error as Error).message}`,
        fix: damaged
          ? 'restore the database from a backup, or `sqlite3 kloop.db ".recover"` into a new file and keep the old one'
          : 'check the file is a SQLite database kloop wrote and that this user may read it and its folder',
      });
    } finally {
      await db?.destroy();
    }
  }
  return report(studyDir, hasDatabase ? databaseFile : null, findings);
}

/** `setup.proposer`: the configured proposer reads the artifact file (src/doctor/proposer-fit.ts); none when the config or the file cannot be read (their own findings say so). */
function proposerFindings(studyDir: string): DoctorFinding[] {
  const config = settle(() => loadStudyConfig(studyDir));
  if (!config.ok || !existsSync(config.value.artifact)) return [];
  const file = path.basename(config.value.artifact);
  const problem = proposerFitProblem(config.value, readFileSync(config.value.artifact, 'utf8'));
  return problem === null
    ? [
        {
          id: 'setup.proposer',
          area: 'setup',
          status: 'ok',
          message: `the ${config.value.proposer.kind} proposer reads ${file}`,
        },
      ]
    : [{ id: 'setup.proposer', area: 'setup', status: 'problem', message: problem.message, fix: problem.fix }];
}

/** A proposer for a study loaded only to evaluate its incumbent: the doctor proposes nothing. */
const NO_PROPOSER: Proposer = {
  id: 'doctor (proposes nothing)',
  propose: () => Promise.reject(new Error('kloop doctor proposes nothing')),
};

/** Where {@link checkMeasurement} finds the study's notebook. */
export interface MeasurementCheckOptions {
  databaseFile: string;
  hasDatabase: boolean;
  openReadOnly: (file: string) => Promise<StudyDatabase>;
}

/**
 * The checks that measure: the seed's "metric scraper built and tested"
 * (`setup.instrument`: the incumbent — the active version in the database,
 * else the seed artifact — is evaluated on every partition and its outputs
 * are valid) and the power check `kloop run` makes before round 1
 * (`setup.power`, src/calibration/power-check.ts).
 *
 * The executor runs in memory (results stored in a scratch database, not the
 * study's: nothing is written). An `llm` executor would mean paid model
 * calls: the doctor reads the incumbent's stored evaluations instead, and
 * leaves a binary task's power check to `kloop run`.
 *
 * Power findings are notes (`info`): the study runs, but the gate cannot
 * accept a change until the partitions grow. An instrument that gives no
 * valid output at all is a problem.
 */
export async function checkMeasurement(studyDir: string, options: MeasurementCheckOptions): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  const add = (
    id: 'setup.instrument' | 'setup.power',
    status: DoctorFinding['status'],
    message: string,
    fix?: string,
  ): void => void findings.push({ id, area: 'setup', status, message, ...(fix !== undefined ? { fix } : {}) });
  const config = loadStudyConfig(studyDir);
  const composed = await composeTaskAsync(config);
  const binary = composed.task.outcome === 'binary';
  const model = config.executor.kind === 'llm';
  let db: StudyDatabase | undefined;
  let scratch: StudyDatabase | undefined;
  try {
    db = options.hasDatabase ? await options.openReadOnly(options.databaseFile) : undefined;
    const incumbent = db !== undefined ? await getRegistryVersion(db) : undefined;
    const what = incumbent !== undefined ? `the incumbent (version ${incumbent.id})` : 'the seed artifact';
    if (model) {
      // The prompt template, as the study's load checks it: every placeholder well formed and filled by every example.
      try {
        checkPromptTemplate(config, readFileSync(config.artifact, 'utf8'), loadCorpus(config, composed.exampleFormat));
      } catch (error) {
        add(
          'setup.instrument',
          'problem',
          `instrument broken: ${(error as Error).message}`,
          'fix the placeholder in the prompt: {{input}}, {{input.<field>}} or {{<field>}} of a field every example has',
        );
        return findings;
      }
      const stored =
        db === undefined || incumbent === undefined ? undefined : await countStoredOutcomes(db, incumbent.hash);
      if (stored === undefined || stored.total === 0) {
        add(
          'setup.instrument',
          'info',
          `instrument: not tested yet — ${what} has no stored evaluation, and the doctor makes no model calls`,
          `kloop eval ${studyDir} runs the executor once on every example and shows the scores`,
        );
      } else {
        add(
          'setup.instrument',
          stored.valid === 0 ? 'problem' : stored.valid < stored.total ? 'info' : 'ok',
          `instrument tested: ${stored.valid} of ${stored.total} stored outputs of ${what} are valid`,
          stored.valid < stored.total
            ? `kloop eval ${studyDir} --json names each invalid output and why (no answer, unreadable, off the task's output schema)`
            : undefined,
        );
      }
      if (binary)
        add(
          'setup.power',
          'info',
          "power check: left to `kloop run`, which makes it before round 1 (it evaluates the incumbent, and this study's executor calls a model)",
        );
      else if (db !== undefined)
        findings.push(
          ...powerFindings(
            await notebookPowerWarnings(db, partitionSizes(config, composed.exampleFormat)),
            false,
            config,
          ),
        );
      else findings.push(...powerFindings([], false, config));
      return findings;
    }
    const study = await loadStudyAsync(studyDir, { createProposer: () => NO_PROPOSER });
    const incumbentText = incumbent?.text ?? study.artifactText;
    scratch = await openDatabase(':memory:');
    const evaluator = createStudyEvaluator(study, scratch);
    let total = 0;
    let valid = 0;
    const reasons = new Map<string, number>();
    for (const partition of PARTITIONS) {
      const score = await evaluatePartition(evaluator, study, incumbentText, partition);
      total += score.total;
      valid += score.total - score.invalid;
      for (const record of score.examples)
        if (!record.valid) reasons.set(record.invalidReason, (reasons.get(record.invalidReason) ?? 0) + 1);
    }
    const invalid = [...reasons]
      .sort((left, right) => right[1] - left[1])
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ');
    add(
      'setup.instrument',
      valid === 0 ? 'problem' : valid < total ? 'info' : 'ok',
      `instrument ${valid === 0 ? 'broken' : 'tested'}: the ${study.executor.id} executor scored ${what} on all ${total} ${study.gate.repeats > 1 ? `example-runs (${study.gate.repeats} repeats)` : 'examples'}, ${valid} valid${invalid !== '' ? ` (invalid: ${invalid})` : ''}`,
      valid < total
        ? `kloop eval ${studyDir} --json names each invalid output and why; fix the executor${config.executor.kind === 'command' ? ' program (executor.command)' : ''} or the artifact`
        : undefined,
    );
    const warnings = await studyPowerWarnings({ study, evaluator, incumbentText, ...(db !== undefined ? { db } : {}) });
    if (warnings.length === 0) {
      add(
        'setup.power',
        'ok',
        binary
          ? `power: ${what} gets enough examples wrong on optimization and shadow for McNemar's exact test to accept a change (α = ${study.gate.alpha}, shadow α = ${study.gate.shadowAlpha})`
          : 'power: no refused candidate so far shows the optimization partition too small for the effects measured',
      );
    } else findings.push(...powerFindings(warnings, binary, config));
    return findings;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A database that cannot be read is the database findings' to report (database.open).
    const storage = isKloopError(error) && error.code.startsWith('storage');
    if (!findings.some((finding) => finding.id === 'setup.instrument')) {
      if (storage)
        add('setup.instrument', 'info', `instrument not tested: the study database cannot be read (${message})`);
      else
        add(
          'setup.instrument',
          'problem',
          `instrument: the study cannot be evaluated: ${message}`,
          'fix what the message names; `kloop eval` shows the same',
        );
    }
    add('setup.power', 'info', `power check skipped: ${message}`);
    return findings;
  } finally {
    await db?.destroy();
    await scratch?.destroy();
  }
}

/** The warnings as findings, each with what to add. */
function powerFindings(warnings: readonly PowerWarning[], binary: boolean, config: StudyConfig): DoctorFinding[] {
  if (warnings.length === 0) {
    return [
      {
        id: 'setup.power',
        area: 'setup',
        status: 'ok',
        message:
          'power: no refused candidate so far shows the optimization partition too small for the effects measured',
      },
    ];
  }
  return warnings.map((warning) => ({
    id: 'setup.power',
    area: 'setup',
    status: 'info',
    message: `power: ${warning.message}`,
    fix: binary
      ? `add ${warning.partition} examples the incumbent gets wrong (kloop corpus add ${config.dir}, or the corpus files; new examples enter shadow) until it gets at least ${warning.needed} wrong; until then the gate cannot accept a change`
      : `add optimization examples until it has about ${warning.needed} (kloop corpus add ${config.dir}, or the corpus files; they enter shadow and graduate)`,
  }));
}

/** The gate's levels and the partition sizes of the corpus files, for a power check that loads no executor. */
function partitionSizes(
  config: StudyConfig,
  format: ComposedTask['exampleFormat'],
): { alpha: number; shadowAlpha: number; optimizationSize: number; shadowSize: number } {
  const corpus = loadCorpus(config, format);
  const size = (name: string): number => corpus.filter((example) => example.partition === name).length;
  return {
    alpha: config.gate.alpha,
    shadowAlpha: config.gate.shadowAlpha,
    optimizationSize: size('optimization'),
    shadowSize: size('shadow'),
  };
}

/** The report, with any password of the storage URL masked wherever it appears (the database, a finding's message or fix). */
function report(studyDir: string, databaseFile: string | null, findings: DoctorFinding[]): DoctorReport {
  const masked = findings.map((finding) => ({
    ...finding,
    message: maskSecrets(finding.message),
    ...(finding.fix !== undefined ? { fix: maskSecrets(finding.fix) } : {}),
  }));
  return {
    study: studyDir,
    database: databaseFile === null ? null : maskSecrets(databaseFile),
    healthy: findings.every((finding) => finding.status !== 'problem'),
    findings: masked,
  };
}

function canAccess(target: string, mode: number): boolean {
  try {
    accessSync(target, mode);
    return true;
  } catch {
    return false;
  }
}
