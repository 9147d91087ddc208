// One app process of an online study, in a process of its own, sharing the
// study's PostgreSQL notebook with another: it assigns the same units as the
// other process, at the same moment, and posts each unit's outcomes twice.
//
//   node tests/online-app-process.mjs <study folder> <postgres url> <first unit> <count>
//
// Protocol: prints `ready` once open and waits for `go` on stdin (so both
// processes start together), then prints one JSON line of its assignments
// `{ "<unit>": "<arm>" }` and exits 0. Loads the compiled library (dist/).
import { createInterface } from 'node:readline';
import { openOnlineStudy } from '../dist/online/study/online-study.js';

const [folder, url, first, count] = process.argv.slice(2);
const study = await openOnlineStudy(folder, { database: url, now: () => new Date('2026-01-05T10:00:00.000Z') });
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await new Promise((resolve) => lines.once('line', resolve));
const units = Array.from({ length: Number(count) }, (_, index) => `unit-${Number(first) + index}`);
const arms = {};
// One at a time, as requests come, interleaved with the other process.
for (const unit of units) arms[unit] = (await study.assign(unit)).arm;
const outcomes = units
  .map((unit) => JSON.stringify({ unit, metric: 'reply_rate', value: 1, at: '2026-01-05T10:00:00.000Z' }))
  .join('\n');
await study.recordOutcomeLines(outcomes, 'http');
await study.recordOutcomeLines(outcomes, 'http');
process.stdout.write(`${JSON.stringify(arms)}\n`);
lines.close();
await study.close();
