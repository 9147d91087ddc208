/**
 * The process entry of the `kloop` command (`bin/kloop.js` loads the compiled
 * `dist/cli/bin.js`): runs {@link main} on `process.argv` and sets the exit
 * code. Everything else — parsing, output, exit codes — is in `main.ts`.
 */
import { main } from './main.ts';

// A closed pipe (`kloop history … | head`) is not an error of kloop's.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv);
