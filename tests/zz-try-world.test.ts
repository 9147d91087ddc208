import { it } from 'vitest';
import { runLoopWorld } from './llm-loop-world.ts';
it('world', async () => {
  const started = Date.now();
  const run = await runLoopWorld(1, 40);
  const { report, stderr, ...rest } = run;
  console.log(JSON.stringify(rest, null, 1));
  console.log(stderr.split('\n').filter((l) => /ACCEPTED|refused|skipped|round|stopped|calibrat/.test(l)).join('\n'));
  console.log('seconds', (Date.now() - started) / 1000);
}, 600_000);
