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

/** The request reader every run.mjs starts with: `readRequest()`, the one request line on stdin. */
export const READ_REQUEST = String.raw`/** The request: the first line on stdin (read up to its end of line, or to the end of input). */
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
}`;

/**
 * `mentions(text, term)`, the term matching of kloop's routing-rules format
 * (version 1; src/executors/routing-rules/route-text.ts), so that a routing
 * program and kloop's keyword-rules proposer read a rules file alike: text
 * and term are cut into words (runs of letters and digits, NFKC, lower
 * case); a term matches when its words occur in the text consecutively
 * ("log in" matches "Log-in", not "login"); a term ending in `*` matches its
 * last word as a prefix ("refund*" matches "refunded").
 */
export const MENTIONS = String.raw`/** The words of a text or a term: runs of letters and digits, NFKC, lower case. */
function words(text) {
  return text.normalize('NFKC').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '');
}

/**
 * True when the term's words occur in the text consecutively, any case ("log in" matches
 * "Log-in", "card" does not match "cardboard"); a term ending in * matches its last word
 * as a prefix ("refund*" matches "refunds" and "refunded").
 */
function mentions(text, term) {
  const prefix = term.trim().endsWith('*');
  const needle = words(prefix ? term.trim().slice(0, -1) : term);
  if (needle.length === 0) return false;
  return (' ' + words(text).join(' ') + ' ').includes(' ' + needle.join(' ') + (prefix ? '' : ' '));
}`;
