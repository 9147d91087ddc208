/**
 * The process entry of the `kloop` command (`bin/kloop.js` loads the compiled
 * `dist/cli/bin.js`): runs {@link main} on `process.argv` and sets the exit
 * code. Everything else — parsing, output, exit codes — is in `main.ts`.
 */
import { watchOutputStreams } from './session/closed-output.ts';
import { main } from './main.ts';

// A closed pipe is not an error of kloop's: see session/closed-output.ts.
watchOutputStreams();
process.exitCode = await main(process.argv);
