/**
 * The NLP library compromise, loaded on the first call: importing it costs
 * about half a second, which commands that never analyse a goal or compare
 * entity names (`kloop status`, `kloop history`, `kloop --help`) do not pay.
 *
 * It is the package's CommonJS bundle (`require('compromise')`, the
 * `require` condition of its exports: builds/three/compromise-three.cjs),
 * one file built from the same sources as its ES module (src/three.js, what
 * `import nlp from 'compromise'` loads). Loading the ES module means
 * resolving and compiling about 300 files: about 0.65 CPU-seconds against
 * 0.4 for the bundle (Node 20, December 2026), paid by every process that
 * analyses a goal, the evaluation workers included. The two give the same
 * analyses: src/tasks/intent/names.test.ts checks that the bundle tags every
 * goal of the reference corpus as the ES module does, and the ES build's
 * singularisation modules ({@link loadSingularRules}) against the bundle's
 * world word by word.
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
    loaded = createRequire(import.meta.url)('compromise') as Nlp;
  }
  return loaded;
}

/** compromise's noun singularisation: its rule function and its table of irregular plurals (singular → plural). */
export interface SingularRules {
  toSingular: (word: string, model: { two: { irregularPlurals: Record<string, string> } }) => string;
  irregularPlurals: Record<string, string>;
}

/** Where compromise keeps the two modules of {@link SingularRules}, relative to its main module (src/three.js). */
const SINGULAR_MODULES = {
  toSingular: './2-two/preTagger/methods/transform/nouns/toSingular/index.js',
  irregularPlurals: './2-two/preTagger/model/irregulars/plurals.js',
} as const;

let singularRules: SingularRules | undefined;

/**
 * compromise's singularisation rules, loaded on the first call without the
 * rest of the library: the two plain modules that `nlp.world()`'s
 * `methods.two.transform.noun.toSingular` and `model.two.irregularPlurals`
 * are (about 10 ms instead of about 450 ms). Their answers are the world's
 * (src/tasks/intent/names.test.ts compares them word by word). Should a
 * later compromise move those files, the whole library is loaded and its
 * world read instead.
 */
export function loadSingularRules(): SingularRules {
  if (singularRules === undefined) {
    const main = import.meta.resolve('compromise');
    const load = createRequire(import.meta.url);
    try {
      singularRules = {
        toSingular: (
          load(fileURLToPath(new URL(SINGULAR_MODULES.toSingular, main))) as { default: SingularRules['toSingular'] }
        ).default,
        irregularPlurals: (
          load(fileURLToPath(new URL(SINGULAR_MODULES.irregularPlurals, main))) as { default: Record<string, string> }
        ).default,
      };
    } catch {
      const world = loadCompromise().world() as unknown as {
        methods: { two: { transform: { noun: { toSingular: SingularRules['toSingular'] } } } };
        model: { two: { irregularPlurals: Record<string, string> } };
      };
      singularRules = {
        toSingular: world.methods.two.transform.noun.toSingular,
        irregularPlurals: world.model.two.irregularPlurals,
      };
    }
  }
  return singularRules;
}
