/** `kloop history <study>` and `kloop show <study> <experiment>`: the lab notebook, read-only. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import type { StudyDatabase } from '../../storage/database.ts';
import { openDatabase, studyDatabasePath } from '../../storage/database.ts';
import { print, printJson, table } from '../output.ts';

async function openExisting(studyDir: string): Promise<StudyDatabase> {
  if (!existsSync(studyDir)) throw new InputError('the study folder does not exist', { file: studyDir });
  const file = studyDatabasePath(path.resolve(studyDir));
  if (!existsSync(file)) throw new InputError('this study has no database yet: run `kloop run` first', { file });
  return openDatabase(file, { readonly: true });
}

export function registerHistoryCommands(program: Command): void {
  program
    .command('history')
    .description('List every experiment of a study: round, decision, reason and delta.')
    .argument('<study>', 'study folder')
    .option('--json', 'print one JSON object on stdout')
    .action(async (studyDir: string, options: { json?: boolean }) => {
      const db = await openExisting(studyDir);
      try {
        const rows = await db.selectFrom('experiments').select(['id', 'run_id', 'round', 'decision', 'reason', 'delta', 'proposer', 'accepted_version_id', 'created_at']).orderBy('id').execute();
        if (options.json === true) {
          printJson({ experiments: rows.map((row) => ({ id: row.id, run: row.run_id, round: row.round, decision: row.decision, reason: row.reason, delta: row.delta, proposer: row.proposer, acceptedVersion: row.accepted_version_id, createdAt: row.created_at })) });
          return;
        }
        if (rows.length === 0) {
          print('no experiments yet');
          return;
        }
        print(table([['id', 'round', 'decision', 'reason', 'delta'], ...rows.map((row) => [String(row.id), String(row.round), row.decision, row.reason, row.delta])]));
      } finally {
        await db.destroy();
      }
    });

  program
    .command('show')
    .description('Show one experiment: its delta, decision and the evidence of every gate check.')
    .argument('<study>', 'study folder')
    .argument('<experiment>', 'experiment id (see `kloop history`)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (studyDir: string, experiment: string, options: { json?: boolean }) => {
      const id = Number(experiment);
      if (!Number.isInteger(id) || id < 1) throw new InputError(`experiment id must be a positive whole number, got "${experiment}"`, { field: '<experiment>' });
      const db = await openExisting(studyDir);
      try {
        const row = await db.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirst();
        if (row === undefined) throw new InputError(`no experiment ${id} in this study`, { field: '<experiment>' });
        const evidence = JSON.parse(row.evidence) as { checks: Array<{ name: string; passed: boolean; statistic: number | null; threshold: number | null; detail: string }>; shadowConsulted: boolean };
        const payload = {
          id: row.id,
          run: row.run_id,
          round: row.round,
          proposer: row.proposer,
          baseVersion: row.base_version_id,
          candidateHash: row.candidate_hash,
          delta: row.delta,
          rationale: row.rationale,
          decision: row.decision,
          reason: row.reason,
          acceptedVersion: row.accepted_version_id,
          fingerprint: row.fingerprint,
          seed: row.seed,
          createdAt: row.created_at,
          checks: evidence.checks,
          shadowConsulted: evidence.shadowConsulted,
        };
        if (options.json === true) {
          printJson(payload);
          return;
        }
        print(`experiment ${row.id} (run ${row.run_id}, round ${row.round}, proposer ${row.proposer}, base version ${row.base_version_id})`);
        print(`delta: ${row.delta}`);
        print(`rationale: ${row.rationale}`);
        print(`decision: ${row.decision}${row.decision === 'accepted' ? ` → version ${row.accepted_version_id}` : ` (${row.reason})`}`);
        print();
        print(table([['check', 'verdict', 'statistic', 'threshold', 'detail'], ...evidence.checks.map((check) => [check.name, check.passed ? 'pass' : 'FAIL', check.statistic === null ? '—' : String(check.statistic), check.threshold === null ? '—' : String(check.threshold), check.detail])]));
      } finally {
        await db.destroy();
      }
    });
}
