#!/usr/bin/env node
// Entry point of the `kloop` command: loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

// A closed pipe (`kloop history … | head`) is not an error of kloop's.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv);
