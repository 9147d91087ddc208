import { it } from 'vitest';
import { startFakeOpenAiServer } from './llm-fake-openai-server.ts';
import { createLlmClient } from '../src/providers/llm-client.ts';
import { resolveLanguageModel } from '../src/providers/create-language-model.ts';
import { parseModelSpec } from '../src/providers/model-spec.ts';
it('speed', async () => {
  const fake = await startFakeOpenAiServer(() => ({ content: '{"a":1}' }));
  const resolved = resolveLanguageModel(parseModelSpec('openai-compatible:sim'), { baseURL: fake.baseURL, env: {} });
  const client = createLlmClient({ resolved, temperature: 0 });
  for (const conc of [1, 4]) {
    const t = Date.now();
    let i = 0;
    await Promise.all(Array.from({ length: conc }, async () => { while (i < 400) { i++; await client.generate({ system: 's', prompt: 'p' + i, repeat: i }); } }));
    console.log('conc', conc, 'ms/call', (Date.now() - t) / 400);
  }
  await fake.close();
}, 60000);
