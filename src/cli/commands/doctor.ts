/** `kloop doctor <study>`: database integrity and the seed's set-up checklist; exit 0 healthy, 1 problems. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { openDatabase, studyDatabaseLocation, studyDatabasePath } from '../../storage/database.ts';
import { diagnoseStudy } from '../../doctor/doctor.ts';
import type { DoctorFinding, DoctorReport } from '../../doctor/doctor.ts';
import { loadStudyConfig } from '../../config/config.ts';
import { print, printJson } from '../output.ts';

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check a study: its database, its set-up and the power of its partitions. The database (SQLite integrity, orphaned or dangling records, decisions made twice, a lease held by a dead run) ' +
        'and the set-up against the seed checklist for any task (automated metric, 15+ seed examples, three registers, invariants, the metric tested on the corpus, ' +
        'stopping criteria, fast and slow schedule, results logged), and whether the partitions are large enough for the gate to accept any change (the power check `kloop run` does before round 1). ' +
        'Read-only. Exit 0 when healthy, 1 when there are problems.',
    )
    .argument('<study>', 'study folder')
    .option('--json', 'print one JSON object on stdout')
    .action(async (studyDir: string, options: { json?: boolean }) => {
      const dir = path.resolve(studyDir);
      if (!existsSync(dir)) throw new InputError('the study folder does not exist', { file: studyDir });
      const report = await withGitNotebookFindings(
        dir,
        await diagnoseStudy(dir, studyDatabaseLocation(dir), (file) => openDatabase(file, { readonly: true })),
      );
      if (options.json === true) printJson(report);
      else {
        print(`kloop doctor ${report.study}`);
        for (const area of ['setup', 'database', 'notebook'] as const) {
          const findings = report.findings.filter((finding) => finding.area === area);
          if (findings.length === 0) continue;
          print();
          print(
            area === 'setup'
              ? 'set-up (seed checklist):'
              : area === 'notebook'
                ? 'git notebook (.kloop/notebook):'
                : `database (${report.database}):`,
          );
          for (const finding of findings) {
            const mark = finding.status === 'ok' ? 'ok     ' : finding.status === 'info' ? 'note   ' : 'PROBLEM';
            print(`  ${mark} ${finding.message}`);
            if (finding.status !== 'ok' && finding.fix !== undefined) print(`          fix: ${finding.fix}`);
          }
        }
        print();
        const problems = report.findings.filter((finding) => finding.status === 'problem').length;
        print(report.healthy ? 'healthy' : `${problems} problem${problems === 1 ? '' : 's'} found`);
      }
      process.exitCode = report.healthy ? 0 : 1;
    });
}

/**
 * Adds the git notebook's findings (src/storage/git-mirror.ts): does the
 * mirror match the database? Only when the study asks for it
 * (`notebook.git: true`) or has one; the git library loads only then.
 */
async function withGitNotebookFindings(dir: string, report: DoctorReport): Promise<DoctorReport> {
  let enabled = false;
  let artifactFileName: string | undefined;
  try {
    const config = loadStudyConfig(dir);
    enabled = config.notebook?.git === true;
    artifactFileName = path.basename(config.artifact);
  } catch {
    return report; // the set-up findings already name the configuration problem
  }
  const file = studyDatabasePath(dir);
  if ((!enabled && !existsSync(path.join(dir, '.kloop', 'notebook', '.git'))) || !existsSync(file)) return report;
  const { checkGitMirror } = await import('../../storage/git-mirror.ts');
  const db = await openDatabase(file, { readonly: true });
  try {
    const findings = await checkGitMirror(db, { studyDir: dir, artifactFileName, enabled });
    const added: DoctorFinding[] = findings.map((finding) => ({ ...finding, area: 'notebook' }));
    const all = [...report.findings, ...added];
    return { ...report, findings: all, healthy: all.every((finding) => finding.status !== 'problem') };
  } finally {
    await db.destroy();
  }
}
