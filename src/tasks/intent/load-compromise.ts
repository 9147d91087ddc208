/**
 * The NLP library compromise, loaded on the first call: importing it costs
 * about half a second, which commands that never analyse a goal or compare
 * entity names (`kloop status`, `kloop history`, `kloop --help`) do not pay.
 *
 * It is the package's ES module (what `import nlp from 'compromise'` loads,
 * the same instance, through Node's require of ES modules), not the
 * package's separate CommonJS bundle, so the answers are those of a static
 * import.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type nlp from 'compromise';

/** compromise's `nlp` function (with `nlp.world()`), as its default export. */
export type Nlp = typeof nlp;

let loaded: Nlp | undefined;

/** compromise's `nlp`, loaded (synchronously) on the first call. */
export function loadCompromise(): Nlp {
  if (loaded === undefined) {
    const file = fileURLToPath(import.meta.resolve('compromise'));
    loaded = (createRequire(import.meta.url)(file) as { default: Nlp }).default;
  }
  return loaded;
}
