/**
 * A prompt-sensitive simulated language model on loopback HTTP, speaking the
 * OpenAI chat-completions API (through `llm-fake-openai-server.ts`), for
 * judging the whole loop against a world whose truth we know.
 *
 * **The executor model.** It answers a goal (the user message) with the gold
 * intent of that goal, degraded item by item: each gold entity, each role,
 * each behaviour and the app type is right when a fixed latent value of the
 * item (seeded by the world seed and the item) lies below the model's skill
 * p for that component plus sampling noise ε ~ N(0, `noiseSd`). The skill
 * starts at `baseSkill` and is moved by the *hint lines* the system prompt
 * contains, each with a known effect:
 *
 * - **good**: +`goodEffect` to one component on every goal;
 * - **neutral**: 0 (but the answer is sampled afresh, as a real model's would be);
 * - **harmful**: −`harmfulEffect` to one component on every goal;
 * - **overfit**: a lookup rule keyed to a word found in several optimization
 *   goals and in no anchor or shadow goal: +`overfitEffect` to every component
 *   on the goals containing the word, and no change at all elsewhere.
 *
 * The sampling noise is drawn from (world seed, goal, request seed, the
 * hints that apply to the goal): a repeat (kloop sends it as the seed) is a
 * fresh sample, the same request gives the same answer, and a hint that does
 * not apply to a goal leaves its answer as it was. A set share of executor
 * answers (`invalidRate`) is broken JSON.
 *
 * **The proposer model** (requests whose response format is named
 * `proposal`) reads the current prompt from the request, draws
 * `candidatesPerAnswer` hints not yet in it (seeded by the request seed, so
 * the nonce decides), and answers each as a rewrite of the hint's section
 * with the hint appended. A set share of answers (`malformedRate`) is
 * malformed: broken JSON, an unclosed fence, an empty answer, a cut-off
 * answer or JSON of the wrong shape.
 */
import { contentHash } from '../src/artifact/content-hash.ts';
import type { IntentExample } from '../src/corpus/intent-example.ts';
import { createSeededRandom } from '../src/stats/index.ts';
import type { Intent } from '../src/tasks/intent/intent.ts';
import { acceptedAppTypes } from '../src/tasks/intent/intent.ts';
import { APP_TYPES, ENTITY_ROLES } from '../src/tasks/intent/vocabulary.ts';
import type { ChatRequest, FakeResponse, FakeServer } from './llm-fake-openai-server.ts';
import { startFakeOpenAiServer } from './llm-fake-openai-server.ts';

export type HintKind = 'good' | 'neutral' | 'harmful' | 'overfit';
export type Component = 'appType' | 'entities' | 'roles' | 'behaviors';

/** One hint line of known effect. */
export interface Hint {
  id: string;
  kind: HintKind;
  /** The `##` section of the prompt it is added to. */
  section: string;
  text: string;
  /** The component it moves (good, harmful); every component on its goals for overfit. */
  component?: Component;
  /** Overfit: the word of the optimization goals it is keyed to. */
  keyword?: string;
}

export interface WorldOptions {
  /** Seed of the world: latent item values, keyword choice. */
  seed: number;
  /** Every example of the study (goal → gold), with partitions (for the overfit keywords). */
  examples: readonly IntentExample[];
  baseSkill?: number;
  goodEffect?: number;
  harmfulEffect?: number;
  overfitEffect?: number;
  noiseSd?: number;
  /** Skill lost on a component whose `##` section is missing or nearly empty (an ablated prompt). Default 0.3. */
  ablationEffect?: number;
  /** Share of executor answers that are broken JSON. Default 0.01. */
  invalidRate?: number;
  /** Share of proposer answers that are malformed. Default 0.2. */
  malformedRate?: number;
  /** The first `n` proposer answers are malformed whatever the rate (a round that must be retried). Default 0. */
  malformedFirst?: number;
  candidatesPerAnswer?: number;
  /** Hints of each kind. Default good 10, neutral 8, harmful 6, overfit 6. */
  counts?: Partial<Record<HintKind, number>>;
  /**
   * A proposer with a memory of its own: the share of proposed lines that
   * repeat a line it offered before (and the prompt does not hold); the
   * others are lines it never offered, while any are left (then repeats).
   * Default: none — every line is drawn afresh from those the prompt does
   * not hold, offered before or not.
   */
  repeatRate?: number;
  /**
   * Per-example noise: `uniform` (default) gives every goal `noiseSd`;
   * `varied` gives a third of the goals none (a temperature-0 model that
   * always answers them alike) and the others `noiseSd` × 0.5 to 2, seeded
   * by the world seed and the goal.
   */
  noiseProfile?: 'uniform' | 'varied';
  /**
   * Delay each answer by a uniform 0..n ms drawn from `Math.random` —
   * deliberately unseeded, so concurrent calls complete in a different order
   * on every run (what a determinism test needs). Default 0.
   */
  latencyJitterMs?: number;
}

export interface SimulatedWorld {
  server: FakeServer;
  hints: readonly Hint[];
  /** The hint a delta or an artifact text carries (first found), if any. */
  hintIn(text: string): Hint | undefined;
  /** Executor and proposer calls answered so far. */
  readonly executorCalls: number;
  readonly proposerCalls: number;
  readonly malformedAnswers: number;
  close(): Promise<void>;
}

const SECTION_OF: Record<Component, string> = {
  appType: 'App type',
  entities: 'Entities',
  roles: 'Roles',
  behaviors: 'Behaviours',
};
const COMPONENTS: readonly Component[] = ['appType', 'entities', 'roles', 'behaviors'];

/** Sentences for hint lines; each hint gets a distinct one (the words do not matter to the world, only the line). */
const OPENINGS = [
  'Always',
  'Carefully',
  'First',
  'When unsure,',
  'As a rule,',
  'Before answering,',
  'In every case,',
  'Where it helps,',
  'Preferably',
  'Systematically',
  'Explicitly',
  'Consistently',
];
const TOPICS: Record<Component, string[]> = {
  appType: [
    'weigh what the business sells against who it serves',
    'name the activity that earns the money',
    'separate platforms from single shops',
    'read the whole description before choosing a type',
    'look for the workflow that repeats every day',
    'ask what the users would call the product',
  ],
  entities: [
    'list every record the people create, not only the people',
    'keep one entity per kind of record mentioned',
    'include the records of what happens, such as visits and orders',
    'count the nouns that carry their own data',
    'prefer the business names of records',
    'split combined records into their parts',
  ],
  roles: [
    'decide each role from what the record means in this business',
    'treat promises with dates as commitments',
    'treat money movements as transactions',
    'treat authored paperwork as documents',
    'treat lookup lists as references',
    'treat the actors as parties',
  ],
  behaviors: [
    'name every verb the users must be able to perform',
    'read reminders and alerts as notification',
    'read sign-off steps as approval',
    'read invoices and charges as payment',
    'read stock counts as inventory tracking',
    'read summaries and totals as reporting',
  ],
};
const NEUTRAL_TOPICS = [
  'keep the answer tidy',
  'write entity names without abbreviations',
  'stay calm and precise',
  'use the same spelling throughout',
  'mind the punctuation of names',
  'prefer short names',
  'avoid repeating yourself',
  'answer in a neutral tone',
  'write relations in a stable order',
  'keep views in alphabetical order',
];
const HARMFUL_TOPICS: Record<Component, string[]> = {
  appType: ['choose other whenever two types could fit', 'pick the type from the first noun only'],
  entities: ['list only the people, never the records', 'keep at most two entities'],
  roles: ['give every entity the role reference', 'call every record a document'],
  behaviors: ['list behaviours only when they are named word for word', 'leave out notifications and payments'],
};

function hash32(text: string): number {
  return Number.parseInt(contentHash(text).slice(0, 8), 16);
}

/** A standard normal draw from a uniform source (Box–Muller). */
function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

function wordsOf(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/\p{L}{5,}/gu) ?? []);
}

/** Words in at least `minimum` optimization goals and in no anchor or shadow goal, most frequent first. */
export function overfitKeywords(examples: readonly IntentExample[], minimum = 3): string[] {
  const counts = new Map<string, number>();
  const elsewhere = new Set<string>();
  for (const example of examples) {
    const words = wordsOf(example.text);
    if (example.partition === 'optimization') for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
    else for (const word of words) elsewhere.add(word);
  }
  return [...counts]
    .filter(([word, count]) => count >= minimum && !elsewhere.has(word))
    .sort((left, right) => right[1] - left[1] || left[0].localeCompare(right[0]))
    .map(([word]) => word);
}

/** Builds the hint pool of a world. */
export function buildHints(options: Pick<WorldOptions, 'seed' | 'examples' | 'counts'>): Hint[] {
  const random = createSeededRandom(options.seed * 31 + 7);
  const counts = { good: 10, neutral: 8, harmful: 6, overfit: 6, ...(options.counts ?? {}) };
  const hints: Hint[] = [];
  const used = new Set<string>();
  const sentence = (topic: string): string => {
    for (;;) {
      const text = `${OPENINGS[Math.floor(random() * OPENINGS.length)]} ${topic}.`;
      if (!used.has(text)) {
        used.add(text);
        return text.charAt(0).toUpperCase() + text.slice(1);
      }
    }
  };
  for (let index = 0; index < counts.good; index += 1) {
    const component = COMPONENTS[index % COMPONENTS.length]!;
    const topics = TOPICS[component];
    hints.push({
      id: `good-${index + 1}`,
      kind: 'good',
      component,
      section: SECTION_OF[component],
      text: sentence(topics[Math.floor(index / COMPONENTS.length) % topics.length]!),
    });
  }
  for (let index = 0; index < counts.neutral; index += 1) {
    const component = COMPONENTS[index % COMPONENTS.length]!;
    hints.push({
      id: `neutral-${index + 1}`,
      kind: 'neutral',
      section: SECTION_OF[component],
      text: sentence(NEUTRAL_TOPICS[index % NEUTRAL_TOPICS.length]!),
    });
  }
  for (let index = 0; index < counts.harmful; index += 1) {
    const component = COMPONENTS[index % COMPONENTS.length]!;
    const topics = HARMFUL_TOPICS[component];
    hints.push({
      id: `harmful-${index + 1}`,
      kind: 'harmful',
      component,
      section: SECTION_OF[component],
      text: sentence(topics[Math.floor(index / COMPONENTS.length) % topics.length]!),
    });
  }
  const keywords = overfitKeywords(options.examples);
  for (let index = 0; index < Math.min(counts.overfit, keywords.length); index += 1) {
    const keyword = keywords[index]!;
    const component = COMPONENTS[index % COMPONENTS.length]!;
    hints.push({
      id: `overfit-${index + 1}`,
      kind: 'overfit',
      keyword,
      section: SECTION_OF[component],
      text: `When the description mentions "${keyword}", answer as for the ${keyword} examples you have seen.`,
    });
  }
  return hints;
}

interface GoldItem {
  gold: Intent;
  example: IntentExample;
}

/** Starts the world's server. */
export async function startSimulatedWorld(options: WorldOptions): Promise<SimulatedWorld> {
  const baseSkill = options.baseSkill ?? 0.45;
  const goodEffect = options.goodEffect ?? 0.22;
  const harmfulEffect = options.harmfulEffect ?? 0.2;
  const overfitEffect = options.overfitEffect ?? 0.45;
  const noiseSd = options.noiseSd ?? 0.12;
  const ablationEffect = options.ablationEffect ?? 0.3;
  const invalidRate = options.invalidRate ?? 0.01;
  const malformedRate = options.malformedRate ?? 0.2;
  const perAnswer = options.candidatesPerAnswer ?? 4;
  const hints = buildHints(options);
  const byGoal = new Map<string, GoldItem>();
  for (const example of options.examples) {
    byGoal.set(example.text, {
      example,
      gold: {
        appType: (acceptedAppTypes(example.expected)[0] ?? 'other') as Intent['appType'],
        entities: (example.expected.entities ?? []).map((entity) => ({
          name: entity.name,
          role: entity.role ?? 'reference',
        })),
        relations: example.expected.relations ?? [],
        behaviors: example.expected.behaviors ?? [],
        projections: example.expected.projections ?? [],
      },
    });
  }
  const appTypes = Object.keys(APP_TYPES);
  const roles = Object.keys(ENTITY_ROLES);
  let executorCalls = 0;
  let proposerCalls = 0;
  let malformedAnswers = 0;

  const latent = (goal: string, item: string): number =>
    createSeededRandom(hash32(`${options.seed}\u0000${goal}\u0000${item}`))();
  /** The sampling noise SD of a goal (see `WorldOptions.noiseProfile`). */
  const noiseOf = (goal: string): number => {
    if (options.noiseProfile !== 'varied') return noiseSd;
    const draw = latent(goal, 'noise-profile');
    return draw < 1 / 3 ? 0 : noiseSd * (0.5 + 1.5 * ((draw - 1 / 3) * 1.5));
  };
  /** Hints the proposer offered so far (its memory, when `repeatRate` is set). */
  const offered = new Set<string>();

  const sectionBody = (prompt: string, section: string): string | undefined => {
    const match = new RegExp(
      `^## ${section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n([\\s\\S]*?)(?=^## |(?![\\s\\S]))`,
      'm',
    ).exec(prompt);
    return match?.[1]?.trim();
  };

  const answerGoal = (chat: ChatRequest): FakeResponse => {
    const item = byGoal.get(chat.user);
    if (item === undefined)
      return { status: 400, body: { error: { message: 'the simulated model knows no such goal' } } };
    const seed = typeof chat.body.seed === 'number' ? chat.body.seed : 0;
    const goalWords = wordsOf(item.example.text);
    const applied = hints.filter(
      (hint) => chat.system.includes(hint.text) && (hint.kind !== 'overfit' || goalWords.has(hint.keyword!)),
    );
    const skill: Record<Component, number> = {
      appType: baseSkill,
      entities: baseSkill,
      roles: baseSkill,
      behaviors: baseSkill,
    };
    // A prompt whose guidance for a component is gone (an ablation) is worse at it, as a real model would be.
    for (const component of COMPONENTS)
      if ((sectionBody(chat.system, SECTION_OF[component]) ?? '').length < 40) skill[component] -= ablationEffect;
    for (const hint of applied) {
      if (hint.kind === 'good') skill[hint.component!] += goodEffect;
      else if (hint.kind === 'harmful') skill[hint.component!] -= harmfulEffect;
      else if (hint.kind === 'overfit') for (const component of COMPONENTS) skill[component] += overfitEffect;
    }
    const random = createSeededRandom(
      hash32(
        `${options.seed}\u0000${item.example.id}\u0000${seed}\u0000${applied
          .map((hint) => hint.id)
          .sort()
          .join(',')}`,
      ),
    );
    if (random() < invalidRate) return { content: '{"appType": "booking", "entities": [' };
    const goalNoise = noiseOf(item.example.text);
    const right = (component: Component, key: string): boolean =>
      latent(item.example.text, `${component}:${key}`) < skill[component] + goalNoise * gaussian(random);
    const gold = item.gold;
    const wrongType = appTypes.filter((type) => type !== gold.appType)[
      Math.floor(latent(item.example.text, 'wrong-type') * (appTypes.length - 1))
    ]!;
    const entities = gold.entities
      .filter((entity) => right('entities', entity.name))
      .map((entity) => ({
        name: entity.name,
        role: right('roles', entity.name) ? entity.role : roles.find((role) => role !== entity.role)!,
      }));
    const answer: Intent = {
      appType: (right('appType', 'type') ? gold.appType : wrongType) as Intent['appType'],
      entities: entities as Intent['entities'],
      relations: gold.relations.filter(
        (relation) =>
          entities.some((entity) => entity.name === relation.from) &&
          entities.some((entity) => entity.name === relation.to),
      ),
      behaviors: gold.behaviors.filter((behavior) => right('behaviors', behavior)),
      projections: gold.projections,
    };
    return { content: JSON.stringify(answer) };
  };

  const propose = (chat: ChatRequest): FakeResponse => {
    const seed = typeof chat.body.seed === 'number' ? chat.body.seed : 0;
    const random = createSeededRandom(hash32(`proposer\u0000${options.seed}\u0000${seed}`));
    const prompt = /<<<PROMPT\n([\s\S]*?)\nPROMPT>>>/.exec(chat.user)?.[1] ?? '';
    if (random() < malformedRate || proposerCalls <= (options.malformedFirst ?? 0)) {
      malformedAnswers += 1;
      const forms: FakeResponse[] = [
        { content: '{"candidates": [{"rationale": "Sharpen the roles.", "edits": [{"section": "Roles", "text": "' },
        { content: '```json\n{"candidates": []' },
        { content: '' },
        { content: '{"candidates": [{"rationale": "cut', finishReason: 'length' },
        { content: JSON.stringify({ proposals: [{ idea: 'add a hint' }] }) },
      ];
      return forms[Math.floor(random() * forms.length)]!;
    }
    const available = hints.filter((hint) => !prompt.includes(hint.text));
    const chosen: Hint[] = [];
    const draw = (from: Hint[]): void => {
      const hint = from[Math.floor(random() * from.length)]!;
      available.splice(available.indexOf(hint), 1);
      chosen.push(hint);
    };
    while (chosen.length < perAnswer && available.length > 0) {
      if (options.repeatRate === undefined) {
        draw(available);
        continue;
      }
      const before = available.filter((hint) => offered.has(hint.id));
      const never = available.filter((hint) => !offered.has(hint.id));
      draw(never.length === 0 || (before.length > 0 && random() < options.repeatRate) ? before : never);
    }
    for (const hint of chosen) offered.add(hint.id);
    const candidates = chosen.map((hint) => ({
      rationale: `Adds a rule on ${hint.section.toLowerCase()} that should help on descriptions like these.`,
      edits: [{ section: hint.section, text: `${sectionBody(prompt, hint.section) ?? ''}\n\n${hint.text}` }],
    }));
    if (candidates.length === 0)
      return {
        content: JSON.stringify({
          candidates: [
            {
              rationale: 'Nothing new to add.',
              edits: [{ section: 'Views', text: sectionBody(prompt, 'Views') ?? '' }],
            },
          ],
        }),
      };
    return { content: JSON.stringify({ candidates }) };
  };

  const jitter = options.latencyJitterMs ?? 0;
  const delayed = (answer: FakeResponse): FakeResponse =>
    jitter > 0 ? { ...answer, delayMs: Math.random() * jitter } : answer;
  const server = await startFakeOpenAiServer((chat) => {
    if (chat.body.response_format?.json_schema?.name === 'proposal' || chat.system.includes('You improve the prompt')) {
      proposerCalls += 1;
      return delayed(propose(chat));
    }
    executorCalls += 1;
    return delayed(answerGoal(chat));
  });
  return {
    server,
    hints,
    hintIn: (text) => hints.find((hint) => text.includes(hint.text)),
    get executorCalls() {
      return executorCalls;
    },
    get proposerCalls() {
      return proposerCalls;
    },
    get malformedAnswers() {
      return malformedAnswers;
    },
    close: () => server.close(),
  };
}
