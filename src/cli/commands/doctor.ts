/** `kloop doctor <study>`: database integrity and the seed's set-up checklist; exit 0 healthy, 1 problems. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { openDatabase, studyDatabasePath } from '../../storage/database.ts';
import { diagnoseStudy } from '../../study/doctor.ts';
import { print, printJson } from '../output.ts';

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check a study: the database (SQLite integrity, orphaned or dangling records, decisions made twice, a lease held by a dead run) ' +
        'and the set-up against the seed checklist (automated metric, 15+ seed examples, three registers, invariants, stopping criteria). ' +
        'Read-only. Exit 0 when healthy, 1 when there are problems.',
    )
    .argument('<study>', 'study folder')
    .option('--json', 'print one JSON object on stdout')
    .action(async (studyDir: string, options: { json?: boolean }) => {
      const dir = path.resolve(studyDir);
      if (!existsSync(dir)) throw new InputError('the study folder does not exist', { file: studyDir });
      const report = await diagnoseStudy(dir, studyDatabasePath(dir), (file) => openDatabase(file, { readonly: true }));
      if (options.json === true) printJson(report);
      else {
        print(`kloop doctor ${report.study}`);
        for (const area of ['setup', 'database'] as const) {
          const findings = report.findings.filter((finding) => finding.area === area);
          if (findings.length === 0) continue;
          print();
          print(area === 'setup' ? 'set-up (seed checklist):' : `database (${report.database}):`);
          for (const finding of findings) {
            const mark = finding.status === 'ok' ? 'ok     ' : finding.status === 'info' ? 'note   ' : 'PROBLEM';
            print(`  ${mark} ${finding.message}`);
            if (finding.status === 'problem' && finding.fix !== undefined) print(`          fix: ${finding.fix}`);
          }
        }
        print();
        const problems = report.findings.filter((finding) => finding.status === 'problem').length;
        print(report.healthy ? 'healthy' : `${problems} problem${problems === 1 ? '' : 's'} found`);
      }
      process.exitCode = report.healthy ? 0 : 1;
    });
}
