// kloop as a library, in plain JavaScript: optimize a keyword list that
// labels product reviews positive or negative.
//
//   node examples/library/review-sentiment.mjs [study-folder]
//
// The artifact is two lines of keywords; the workflow (`execute`) counts them
// in a review; the scorer is plain JavaScript (right or wrong: a binary task,
// so the gate uses McNemar's exact test); the proposer is a function that
// reads the misread optimization reviews. The study's notebook is the folder
// given (default ./review-sentiment-study): `kloop history <folder>` and
// `kloop report <folder>` read it like any study's.
import { createStudy } from 'kloop';

const folder = process.argv[2] ?? 'review-sentiment-study';

const seed = 'positive: good, great\nnegative: bad, awful\n';

/** Reviews written for this example; partitions as a study would have them. */
const reviews = [
  ['o01', 'Great battery and a bright screen.', 'positive'],
  ['o02', 'Awful support, they never answered.', 'negative'],
  ['o03', 'I love it, works perfectly out of the box.', 'positive'],
  ['o04', 'It broke after two days, total waste of money.', 'negative'],
  ['o05', 'Excellent sound, I love the deep bass.', 'positive'],
  ['o06', 'Terrible fit, the seams came apart.', 'negative'],
  ['o07', 'Works perfectly and it arrived early.', 'positive'],
  ['o08', 'Stopped working within a week. Disappointed.', 'negative'],
  ['o09', 'Excellent value, would buy again.', 'positive'],
  ['o10', 'Cheap plastic that broke on day one.', 'negative'],
  ['o11', 'My kids love it and it is sturdy.', 'positive'],
  ['o12', 'Terrible smell and the color faded.', 'negative'],
  ['o13', 'Comfortable, excellent stitching, recommended.', 'positive'],
  ['o14', 'A waste of money, it stopped working.', 'negative'],
  ['o15', 'Good price and quick delivery.', 'positive'],
  ['o16', 'Disappointed: the lid broke and leaks.', 'negative'],
  ['o17', 'Highly recommended, sturdy and light.', 'positive'],
  ['o18', 'Bad instructions and a terrible app.', 'negative'],
  ['o19', 'Comfortable enough for a long day.', 'positive'],
  ['o20', 'Returned it: cheap and disappointed.', 'negative'],
  ['a01', 'Great phone, good camera.', 'positive'],
  ['a02', 'Bad battery, awful charger.', 'negative'],
  ['a03', 'Good blender, great for smoothies.', 'positive'],
  ['a04', 'Awful taste and a bad smell.', 'negative'],
  ['s01', 'I love this kettle, it works perfectly.', 'positive'],
  ['s02', 'The handle broke the first week.', 'negative'],
  ['s03', 'Excellent little speaker, recommended.', 'positive'],
  ['s04', 'Terrible glue, it stopped working.', 'negative'],
  ['s05', 'Comfortable and sturdy chair.', 'positive'],
  ['s06', 'Cheap zipper, disappointed with it.', 'negative'],
  ['s07', 'Excellent coffee, love the aroma.', 'positive'],
  ['s08', 'A waste: it broke in a month.', 'negative'],
];
const examples = reviews.map(([id, input, expected]) => ({
  id,
  input,
  expected,
  partition: id.startsWith('o') ? 'optimization' : id.startsWith('a') ? 'anchor' : 'shadow',
}));

/** The artifact, read: label → keywords. */
function parseKeywords(artifact) {
  const lists = { positive: [], negative: [] };
  for (const line of artifact.split('\n')) {
    const match = /^(positive|negative):(.*)$/.exec(line.trim());
    if (match)
      lists[match[1]] = match[2]
        .split(',')
        .map((word) => word.trim().toLowerCase())
        .filter(Boolean);
  }
  return lists;
}

const wordsOf = (text) => text.toLowerCase().match(/[a-z']+/g) ?? [];

/** The workflow: count each label's keywords in the review; a tie is "unsure" (a valid answer, scored wrong). */
function execute(artifact, review) {
  const lists = parseKeywords(artifact);
  const words = wordsOf(review);
  const count = (label) => words.filter((word) => lists[label].includes(word)).length;
  const positive = count('positive');
  const negative = count('negative');
  return positive > negative ? 'positive' : negative > positive ? 'negative' : 'unsure';
}

/** The metric, in plain JavaScript: right or wrong, with the reason in words. */
function score(output, expected) {
  return { pass: output === expected, reason: output === expected ? '' : `expected ${expected}, got ${output}` };
}

const STOP_WORDS = new Set(
  'a an the and or it is i my me this that of on in for to with after within was were be day week one two first month its they their enough long little'.split(
    ' ',
  ),
);

/**
 * The proposer: words common to the misread optimization reviews of one
 * label (and absent from the other label's reviews), added to that label's
 * list — all at once, and one label at a time.
 */
function propose({ incumbentText, incumbentScores, examples: optimization, maxCandidates }) {
  const lists = parseKeywords(incumbentText);
  const wrong = new Set(
    incumbentScores.examples.filter((record) => record.valid && record.composite < 1).map((record) => record.exampleId),
  );
  const counts = { positive: new Map(), negative: new Map() };
  const seenIn = { positive: new Set(), negative: new Set() };
  for (const example of optimization) {
    for (const word of new Set(wordsOf(example.text))) {
      seenIn[example.expected].add(word);
      if (
        wrong.has(example.id) &&
        !STOP_WORDS.has(word) &&
        !lists.positive.includes(word) &&
        !lists.negative.includes(word)
      ) {
        counts[example.expected].set(word, (counts[example.expected].get(word) ?? 0) + 1);
      }
    }
  }
  const pick = (label) => {
    const other = label === 'positive' ? 'negative' : 'positive';
    return [...counts[label]]
      .filter(([word, n]) => n >= 2 && !seenIn[other].has(word))
      .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
      .map(([word]) => word);
  };
  const render = (added) =>
    `positive: ${[...lists.positive, ...added.positive].join(', ')}\nnegative: ${[...lists.negative, ...added.negative].join(', ')}\n`;
  const positive = pick('positive');
  const negative = pick('negative');
  const candidates = [];
  if (positive.length + negative.length > 0)
    candidates.push({
      text: render({ positive, negative }),
      rationale: `add ${[...positive, ...negative].join(', ')}`,
    });
  if (positive.length > 0)
    candidates.push({
      text: render({ positive, negative: [] }),
      rationale: `add positive words ${positive.join(', ')}`,
    });
  if (negative.length > 0)
    candidates.push({
      text: render({ positive: [], negative }),
      rationale: `add negative words ${negative.join(', ')}`,
    });
  return candidates.slice(0, maxCandidates);
}

const study = await createStudy({
  storage: folder,
  artifact: seed,
  examples,
  score,
  outcome: 'binary',
  execute,
  executorId: 'review-keywords@1',
  proposer: propose,
  stopping: { maxExperiments: 12, plateauRounds: 2 },
});
try {
  const result = await study.optimize();
  const pct = (value) => (value === null ? 'n/a' : `${(100 * value).toFixed(1)}%`);
  for (const partition of ['optimization', 'anchor', 'shadow']) {
    console.log(
      `${partition.padEnd(12)} accuracy ${pct(result.baseline[partition])} → ${pct(result.best.scores[partition])}`,
    );
  }
  console.log(
    `stopped: ${result.stopReason} (${result.stopDetail}); ${result.newExperiments} experiment(s); active version ${result.best.versionId}`,
  );
  console.log(`best artifact:\n${result.best.text}`);
} finally {
  await study.close();
}
