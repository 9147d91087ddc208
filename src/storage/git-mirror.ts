/**
 * The optional git lab notebook (`notebook.git: true` in kloop.yaml, or
 * `--git`): a git repository in `<study>/.kloop/notebook/` whose history
 * replays the moves of the registry's `active` pointer — the seed, each
 * accepted version (the decision and its evidence as the commit message),
 * each version approved in review and each activation by hand (with who did
 * it as the author). Each commit holds one file, the artifact under its own
 * name (e.g. `playbook.yaml`), so `git log -p` reads as the artifact's
 * history and `git checkout <commit> -- playbook.yaml` restores any of it.
 *
 * The database stays the source of truth: the mirror is a sync from it,
 * idempotent (every commit carries a `Kloop-Registry-Event: N` trailer; a sync
 * commits the events after the last one mirrored), written through
 * isomorphic-git (pure JavaScript, no `git` binary needed). `kloop doctor`
 * checks that the mirror matches the database ({@link checkGitMirror}).
 */
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import type { StudyDatabase } from './study-database.ts';
import type { RegistryEvent } from './activation.ts';
import { listRegistryEvents } from './activation.ts';
import { getVersion } from './registry.ts';

/** Where the mirror lives, relative to the study folder. */
export const GIT_MIRROR_FOLDER = path.join('.kloop', 'notebook');

/** Name and email of the loop's own commits. */
const KLOOP_AUTHOR = { name: 'kloop', email: 'kloop@localhost' };

/** The mirror's folder of a study. */
export function gitMirrorPath(studyDir: string): string {
  return path.join(studyDir, GIT_MIRROR_FOLDER);
}

/** Options of {@link syncGitMirror} and {@link checkGitMirror}. */
export interface GitMirrorOptions {
  /** The study folder (absolute). */
  studyDir: string;
  /** File name of the artifact inside the mirror, e.g. `playbook.yaml` (the basename of the study's artifact). */
  artifactFileName: string;
}

/** One commit written by a sync. */
export interface MirrorCommit {
  oid: string;
  eventId: number;
  versionId: number;
}

/** What a sync did. */
export interface MirrorSyncResult {
  /** The mirror's folder. */
  dir: string;
  /** Commits written by this sync, oldest first (empty when the mirror was up to date). */
  commits: MirrorCommit[];
  /** The head commit after the sync; null when there is nothing to mirror yet. */
  head: string | null;
}

/** One finding of {@link checkGitMirror}, in `kloop doctor`'s shape. */
export interface MirrorFinding {
  id: string;
  status: 'ok' | 'problem' | 'info';
  message: string;
  fix?: string;
}

/** A mirrored commit as read back. */
interface MirroredCommit {
  oid: string;
  eventId: number | null;
  versionId: number | null;
}

const TRAILER = /^Kloop-Registry-Event:\s*(\d+)\s*$/m;
const VERSION_TRAILER = /^Kloop-Version:\s*(\d+)\s*$/m;

function hasRepository(dir: string): boolean {
  return fs.existsSync(path.join(dir, '.git'));
}

async function readMirroredCommits(dir: string): Promise<MirroredCommit[]> {
  let entries: Awaited<ReturnType<typeof git.log>>;
  try {
    entries = await git.log({ fs, dir });
  } catch (error) {
    if ((error as { code?: string }).code === 'NotFoundError') return []; // no commit yet
    throw error;
  }
  return entries.map((entry) => {
    const event = TRAILER.exec(entry.commit.message);
    const version = VERSION_TRAILER.exec(entry.commit.message);
    return {
      oid: entry.oid,
      eventId: event === null ? null : Number(event[1]),
      versionId: version === null ? null : Number(version[1]),
    };
  });
}

function formatNumber(value: unknown, digits = 4): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '—';
}

interface EvidenceCheck {
  name?: unknown;
  passed?: unknown;
  detail?: unknown;
}

/** The commit message of one registry move: a subject, the change, the decision's evidence, trailers. */
async function commitMessage(
  db: StudyDatabase,
  event: RegistryEvent,
  versionHash: string,
  experimentId: number | null,
): Promise<string> {
  const lines: string[] = [];
  const accepted = /^experiment (\d+) accepted$/.exec(event.reason);
  const experiment =
    accepted !== null || experimentId !== null
      ? await db
          .selectFrom('experiments')
          .selectAll()
          .where('id', '=', Number(accepted?.[1] ?? experimentId))
          .executeTakeFirst()
      : undefined;
  if (event.reason === 'seed') lines.push(`seed: version ${event.versionId}`);
  else if (accepted !== null && experiment !== undefined)
    lines.push(`experiment ${experiment.id} accepted: version ${event.versionId}`, '', experiment.delta);
  else lines.push(`version ${event.versionId}: ${event.reason}`);
  if (accepted !== null && experiment !== undefined) {
    lines.push(
      '',
      `decision: ${experiment.decision} (run ${experiment.run_id}, round ${experiment.round}, proposer ${experiment.proposer}, base version ${experiment.base_version_id})`,
    );
    if (experiment.rationale.trim() !== '') lines.push(`rationale: ${experiment.rationale.trim()}`);
    let checks: EvidenceCheck[] = [];
    try {
      const evidence = JSON.parse(experiment.evidence) as { checks?: unknown };
      if (Array.isArray(evidence.checks)) checks = evidence.checks as EvidenceCheck[];
    } catch {
      // evidence unreadable: the message says so
      lines.push('evidence: unreadable JSON');
    }
    if (checks.length > 0) {
      lines.push('evidence:');
      for (const check of checks)
        lines.push(
          `  ${check.passed === true ? 'pass' : 'FAIL'} ${String(check.name ?? '?')}: ${String(check.detail ?? '')}`,
        );
    }
  }
  lines.push(
    '',
    `Kloop-Registry-Event: ${event.id}`,
    `Kloop-Version: ${event.versionId}`,
    `Kloop-Version-Hash: ${versionHash}`,
  );
  if (experiment !== undefined) lines.push(`Kloop-Experiment: ${experiment.id}`);
  if (event.actor !== null) lines.push(`Kloop-Actor: ${event.actor}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Commits every move of the `active` pointer not yet mirrored, oldest first
 * (creating the repository on first use). Idempotent: a second call with
 * nothing new writes nothing. Call it under the study's run lease (the run
 * and `kloop activate` do) so that two processes never sync at once.
 *
 * @throws the file system's or isomorphic-git's error when the folder cannot be written
 */
export async function syncGitMirror(db: StudyDatabase, options: GitMirrorOptions): Promise<MirrorSyncResult> {
  const dir = gitMirrorPath(options.studyDir);
  const events = await listRegistryEvents(db, 'active');
  if (!hasRepository(dir)) {
    if (events.length === 0) return { dir, commits: [], head: null };
    fs.mkdirSync(dir, { recursive: true });
    await git.init({ fs, dir, defaultBranch: 'main' });
  }
  const mirrored = await readMirroredCommits(dir);
  const last = Math.max(0, ...mirrored.map((commit) => commit.eventId ?? 0));
  const commits: MirrorCommit[] = [];
  let head = mirrored[0]?.oid ?? null;
  const file = path.join(dir, options.artifactFileName);
  for (const event of events.filter((candidate) => candidate.id > last)) {
    const version = await getVersion(db, event.versionId);
    if (version === undefined) continue; // a dangling pointer: doctor reports it from the database side
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, version.text, 'utf8');
    fs.renameSync(temporary, file);
    await git.add({ fs, dir, filepath: options.artifactFileName });
    const seconds = Math.floor(Date.parse(event.createdAt) / 1000);
    const stamp = { timestamp: Number.isFinite(seconds) ? seconds : Math.floor(Date.now() / 1000), timezoneOffset: 0 };
    const author =
      event.actor === null ? { ...KLOOP_AUTHOR, ...stamp } : { name: event.actor, email: KLOOP_AUTHOR.email, ...stamp };
    const oid = await git.commit({
      fs,
      dir,
      message: await commitMessage(db, event, version.hash, version.experimentId),
      author,
      committer: { ...KLOOP_AUTHOR, ...stamp },
    });
    commits.push({ oid, eventId: event.id, versionId: version.id });
    head = oid;
  }
  return { dir, commits, head };
}

/**
 * Checks that the mirror matches the database: every move of `active` has its
 * commit, each commit holds the text of the version it names, no commit names
 * a move the database does not have, and the head holds the active version.
 * Read-only.
 *
 * @param enabled whether the study asks for the mirror (`notebook.git`): a
 *   missing or mismatching mirror is then a problem; otherwise a missing one
 *   is not reported and a mismatching one is a note
 */
export async function checkGitMirror(
  db: StudyDatabase,
  options: GitMirrorOptions & { enabled: boolean },
): Promise<MirrorFinding[]> {
  const dir = gitMirrorPath(options.studyDir);
  const events = await listRegistryEvents(db, 'active');
  if (!hasRepository(dir)) return missingMirrorFindings(dir, options.enabled, events.length);
  const fix =
    'the next `kloop run` or `kloop activate` commits what is missing; a mirror edited by hand: move .kloop/notebook aside and let kloop rebuild it from the database';
  let mirrored: MirroredCommit[];
  try {
    mirrored = await readMirroredCommits(dir);
  } catch (error) {
    return [
      {
        id: 'notebook.git',
        status: 'problem',
        message: `git notebook: cannot read the mirror at ${dir}: ${(error as Error).message}`,
        fix,
      },
    ];
  }
  const byEvent = new Map<number, MirroredCommit>();
  for (const commit of mirrored) if (commit.eventId !== null) byEvent.set(commit.eventId, commit);
  const eventIds = new Set(events.map((event) => event.id));
  const missing = events.filter((event) => !byEvent.has(event.id));
  const unknown = mirrored.filter((commit) => commit.eventId === null || !eventIds.has(commit.eventId));
  const wrongText = await commitsWithWrongText(db, dir, options.artifactFileName, events, byEvent);
  const findings: MirrorFinding[] = [];
  if (missing.length === 0 && unknown.length === 0 && wrongText.length === 0) {
    findings.push({
      id: 'notebook.git',
      status: 'ok',
      message: `git notebook: ${mirrored.length} commits in ${dir} match the ${events.length} moves of the active version`,
    });
  } else {
    const parts = [
      missing.length > 0
        ? `${missing.length} moves of the active version not mirrored (registry events ${missing.map((event) => event.id).join(', ')})`
        : '',
      unknown.length > 0
        ? `${unknown.length} commits name no move of the database (${unknown.map((commit) => commit.oid.slice(0, 8)).join(', ')})`
        : '',
      wrongText.length > 0
        ? `${wrongText.length} commits do not hold their version's text: ${wrongText.join(', ')}`
        : '',
    ].filter((part) => part !== '');
    if (options.enabled)
      findings.push({
        id: 'notebook.git',
        status: 'problem',
        message: `git notebook at ${dir} does not match the database: ${parts.join('; ')}`,
        fix,
      });
    else
      findings.push({
        id: 'notebook.git',
        status: 'info',
        message: `git notebook at ${dir} is behind the database (notebook.git is off, so it is not kept up to date): ${parts.join('; ')}`,
      });
  }
  return findings;
}

/** The commits that do not hold the text of the version their move names (or name another version), described. */
async function commitsWithWrongText(
  db: StudyDatabase,
  dir: string,
  artifactFileName: string,
  events: Awaited<ReturnType<typeof listRegistryEvents>>,
  byEvent: ReadonlyMap<number, MirroredCommit>,
): Promise<string[]> {
  const wrongText: string[] = [];
  for (const event of events) {
    const commit = byEvent.get(event.id);
    if (commit === undefined) continue;
    const version = await getVersion(db, event.versionId);
    if (version === undefined) continue;
    const expected = (await git.hashBlob({ object: version.text })).oid;
    let actual: string | null = null;
    try {
      actual = (await git.readBlob({ fs, dir, oid: commit.oid, filepath: artifactFileName })).oid;
    } catch {
      actual = null;
    }
    if (actual !== expected || commit.versionId !== event.versionId)
      wrongText.push(`commit ${commit.oid.slice(0, 8)} (event ${event.id}, version ${event.versionId})`);
  }
  return wrongText;
}

/** The finding of a study without a mirror: none when the mirror is off, else a note before the first run and a problem after. */
function missingMirrorFindings(dir: string, enabled: boolean, moves: number): MirrorFinding[] {
  if (!enabled) return [];
  if (moves === 0)
    return [
      {
        id: 'notebook.git',
        status: 'info',
        message: `git notebook: no mirror yet at ${dir} (nothing to mirror before the first run)`,
      },
    ];
  return [
    {
      id: 'notebook.git',
      status: 'problem',
      message: `git notebook: notebook.git is on but there is no mirror at ${dir}`,
      fix: 'the next `kloop run` (or `kloop activate`) creates it from the database',
    },
  ];
}
