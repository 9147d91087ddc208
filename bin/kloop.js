#!/usr/bin/env node
// Entry point of the `kloop` command: runs the compiled CLI in dist/ (`npm run build`;
// `npm ci` in a clone builds it through the `prepare` script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/bin/kloop.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'kloop: the compiled CLI (dist/) is missing: run `npm run build` (or `npm ci`) in the kloop folder first\n',
  );
  process.exit(1);
}
await import(entry.href);
