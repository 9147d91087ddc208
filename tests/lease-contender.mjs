// One contender for a study's lease, in a process of its own, as `kloop run` starts:
// open (creating and migrating) the study database, then take the lease.
//
//   node tests/lease-contender.mjs <database file> <study key>
//
// Protocol, a line each: it prints `ready` once loaded and waits for `go` on
// stdin (so every contender starts at the same moment), then either prints
// `{"acquired":<pid>}`, keeps the lease (with its heartbeat) until `release`
// on stdin and exits 0; or prints `{"error":{code,message}}` and exits with
// the error's exit code (study_busy: 3; anything else: 1).
// Loads the compiled library (dist/), as the CLI tests do.
import { createInterface } from 'node:readline';
import { openDatabase } from '../dist/storage/database.js';
import { acquireLease, releaseLease, startLeaseHeartbeat } from '../dist/storage/lease.js';

const [file, studyKey] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once('line', resolve));
const say = (value) => process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);

say('ready');
await nextLine(); // go
let db;
try {
  db = await openDatabase(file);
  // Staleness is not what is tested: a holder is never judged dead by its heartbeat's age here, however loaded the machine.
  const lease = await acquireLease(db, { studyKey, staleAfterMs: 3_600_000 });
  const heartbeat = startLeaseHeartbeat(db, lease, { file });
  say({ acquired: process.pid });
  await nextLine(); // release
  await heartbeat.stop();
  await releaseLease(db, lease);
  await db.destroy();
  process.exit(0);
} catch (error) {
  // The CLI's rule: a kloop error carries its code and exit code; anything else (a raw SQLite error) is exit 1.
  const known = typeof error?.exitCode === 'number' && typeof error?.code === 'string';
  say({
    error: { code: known ? error.code : String(error?.code ?? 'internal'), message: String(error?.message ?? error) },
  });
  await db?.destroy().catch(() => undefined);
  process.exit(known ? error.exitCode : 1);
}
