/**
 * What every `run.mjs` of a `command` study shares: the comment that says how
 * kloop's command executor talks to it (ENGINE-SPEC: one JSON line on stdin,
 * the answer as JSON on stdout) and the functions that read the request and
 * match a keyword. The generated JavaScript is plain Node 20 ESM with no
 * dependencies, so a study folder runs it as it is.
 *
 * @module
 */

/** How kloop's command executor talks to the program, for the head of every run.mjs. */
export const COMMAND_PROTOCOL = String.raw`// kloop's command executor runs this program once per example, in the study
// folder. It writes one JSON line on stdin:
//   {"artifact": "<absolute path of the candidate artifact>", "input": <the record's input>,
//    "text": "<the input's text>", "repeat": 0}
// (the artifact's path is also in the environment, KLOOP_ARTIFACT) and reads
// the answer as JSON on stdout. A non-zero exit, a timeout or an answer that
// is not JSON is an invalid output, counted and never scored as 0.`;

/** The functions every run.mjs starts with: `readRequest()` (the one request line on stdin) and `mentions(text, keyword)`. */
export const PROGRAM_HELPERS = String.raw`/** The request: the first line on stdin (the executor may keep stdin open). */
function readRequest() {
  return new Promise((resolve, reject) => {
    let buffer = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end !== -1) {
        process.stdin.destroy();
        resolve(buffer.slice(0, end));
      }
    });
    process.stdin.on('end', () => resolve(buffer));
    process.stdin.on('error', reject);
  });
}

/** True when the keyword (a word or phrase, any case) starts a word of the text: "crash" matches "crashes". */
function mentions(text, keyword) {
  const pattern = keyword.trim().toLowerCase().replace(/[.*+?^$()|[\]{}\\]/g, '\\$&').replace(/\s+/g, '\\s+');
  return pattern !== '' && new RegExp('(?<![\\p{L}\\p{N}])' + pattern, 'iu').test(text);
}`;

