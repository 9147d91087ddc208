/** What `kloop doctor` reports (src/doctor/doctor.ts): findings, each with what to fix, and whether the study is healthy. */

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
