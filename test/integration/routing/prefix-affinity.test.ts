// The prefix_affinity strategy, through a real gateway and three emulated vLLM replicas
// (test/support/vllm-emulator/) on real sockets, each with its own prefix cache: a conversation's
// turns go to the replica that served its earlier turns (which then serves the prompt from its
// cache), and a shared system prompt that piles onto one replica spreads to the others once that
// replica is far busier than they are. With Redis, two gateways share the index: what one sent
// decides where the other sends.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { startVllmEmulator, type VllmEmulator } from '../../support/vllm-emulator/index.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import { eventually } from '../../support/eventually.ts';

const bed = testBed({ redis: true });
const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';

async function replicas(t: TestContext, count: number, settings: Parameters<typeof startVllmEmulator>[0] = {}): Promise<VllmEmulator[]> {
  const started = await Promise.all(
    Array.from({ length: count }, () => startVllmEmulator({ prompt_tokens_details: true, time_scale: 0.01, ...settings })),
  );
  t.after(() => Promise.all(started.map((replica) => replica.close())));
  return started;
}

const config = (engines: readonly { url: string }[]): GatewayConfig => ({
  models: [
    {
      id: 'chat',
      type: 'text-generation',
      load_balancing_strategy: 'prefix_affinity',
      providers: [{ model: MODEL, type: 'vllm', id: 'engines', retries: 0, args: { api_urls: engines.map((e) => e.url) } }],
    },
  ],
});

/**
 * The engines' /metrics not read: these tests are about the prompt's cache and this gateway's own
 * counts, and engine room (engine-room.test.ts) would otherwise keep a replica out once the
 * requests sent to it since its last reading reach its queue limit, at a moment that depends on
 * the machine's speed.
 */
const AFFINITY_ALONE = { engineScrapeIntervalMs: 0 };

const systemPrompt = (topic: string) => `You answer questions about ${topic}. `.repeat(60);

function ask(gw: TestGateway, messages: { role: string; content: string }[], maxTokens = 8) {
  return gw.post('/v1/chat/completions', { model: 'chat', messages, max_tokens: maxTokens });
}

/** Which replicas received requests since `before` (counts from each emulator's stats). */
const receivedSince = (engines: readonly VllmEmulator[], before: readonly number[]) =>
  engines.map((e, i) => e.stats().received - before[i]!);
const received = (engines: readonly VllmEmulator[]) => engines.map((e) => e.stats().received);

describe('prefix affinity', () => {
  test("a conversation's next turn goes to the replica that served its first, and is served from its cache", async (t) => {
    const engines = await replicas(t, 3);
    const gw = await bed.gateway(config(engines), { t, settings: AFFINITY_ALONE });
    for (const topic of ['astronomy', 'cooking', 'tax law']) {
      const turn1 = [
        { role: 'system', content: systemPrompt(topic) },
        { role: 'user', content: `Where do I start with ${topic}? `.repeat(8) },
      ];
      const before1 = received(engines);
      const first = await ask(gw, turn1);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const servedBy = receivedSince(engines, before1).indexOf(1);
      const turn2 = [
        ...turn1,
        { role: 'assistant', content: String(first.body.choices[0].message.content) },
        { role: 'user', content: 'And then?' },
      ];
      const before2 = received(engines);
      const cachedBefore = engines[servedBy]!.stats().cached_prompt_tokens;
      assert.equal((await ask(gw, turn2)).status, 200);
      assert.equal(receivedSince(engines, before2).indexOf(1), servedBy, `the second turn on ${topic} goes where the first went`);
      assert.ok(engines[servedBy]!.stats().cached_prompt_tokens > cachedBefore, 'the replica served the prompt from its prefix cache');
    }
  });

  test('a hot system prompt stays on its replica until that one is far busier than the others, then spreads', async (t) => {
    // Fake replicas that hold every answer until the whole burst is placed: each placement sees
    // the others' requests still in flight, however fast this machine sends them.
    const fakes = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI()]);
    t.after(() => Promise.all(fakes.map((fake) => fake.close())));
    const gw = await bed.gateway(config(fakes), { t, settings: AFFINITY_ALONE });
    const shared = [{ role: 'system', content: systemPrompt('the weather') }];
    assert.equal((await ask(gw, [...shared, { role: 'user', content: 'Hello there, how are you today?' }])).status, 200);
    const home = fakes.findIndex((fake) => fake.requests.length === 1);
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    for (const fake of fakes) fake.behave({ until: gate });
    const burst = Promise.all(
      Array.from({ length: 20 }, (_, i) => ask(gw, [...shared, { role: 'user', content: `Question number ${i}: will it rain?` }], 20)),
    );
    await eventually(() => fakes.reduce((sum, fake) => sum + fake.openRequests, 0) === 20, 'the whole burst is placed and held');
    const counts = fakes.map((fake, i) => fake.requests.length - (i === home ? 1 : 0));
    open();
    assert.deepEqual(
      (await burst).map((r) => r.status),
      Array(20).fill(200),
    );
    const elsewhere = counts.reduce((sum, n, i) => (i === home ? sum : sum + n), 0);
    assert.ok(counts[home]! >= 9, `the replica holding the prompt took the first 9 at least (${counts.join(', ')})`);
    assert.ok(elsewhere >= 5, `the rest spread to the other replicas (${counts.join(', ')})`);
  });

  test('with Redis, two gateways share the index: the second sends a conversation where the first did', async (t) => {
    const engines = await replicas(t, 3);
    const [one, two] = await Promise.all([
      bed.gateway(config(engines), { t, store: 'redis', settings: AFFINITY_ALONE }),
      bed.gateway(config(engines), { t, store: 'redis', settings: AFFINITY_ALONE }),
    ]);
    for (const topic of ['gardening', 'chess']) {
      const turn1 = [
        { role: 'system', content: systemPrompt(topic) },
        { role: 'user', content: `Teach me ${topic}. `.repeat(10) },
      ];
      const before1 = received(engines);
      assert.equal((await ask(one!, turn1)).status, 200);
      const servedBy = receivedSince(engines, before1).indexOf(1);
      const before2 = received(engines);
      assert.equal((await ask(two!, [...turn1, { role: 'user', content: 'Go on.' }])).status, 200);
      assert.equal(receivedSince(engines, before2).indexOf(1), servedBy, `the other gateway sends ${topic} to the same replica`);
    }
  });
});
