// A vLLM provider with forward_priority sends each generation's effective priority to the engine
// as vLLM's own `priority` field, negated (vLLM serves lower values first, the gateway higher
// ones), so the gateway's order holds inside the engine. Without it, or for endpoints vLLM does
// not schedule so (embeddings), the field is not sent. Real gateway, fake vLLM on a real socket.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { userWithKey, type GatewayConfig } from '../../support/gateway-config.ts';
import { USER_MESSAGE } from '../../support/routing.ts';

const bed = testBed();

const urgent = userWithKey('urgent', { name: 'Urgent', priority: 7 });
const batch = userWithKey('batch', { name: 'Batch', priority: -3 });
const plain = userWithKey('plain', { name: 'Plain' });

async function backend(t: TestContext): Promise<FakeBackend> {
  const fake = await startFakeOpenAI();
  t.after(() => fake.close());
  return fake;
}

const config = (url: string, forward: boolean | undefined): GatewayConfig => ({
  users: [urgent.entry, batch.entry, plain.entry],
  models: [
    {
      id: 'chat',
      type: 'text-generation',
      providers: [{ model: 'm', type: 'vllm', args: { api_url: url }, ...(forward === undefined ? {} : { forward_priority: forward }) }],
    },
    {
      id: 'embed',
      type: 'text-embeddings-inference',
      providers: [{ model: 'e', type: 'vllm', args: { api_url: url }, forward_priority: forward ?? false }],
    },
  ],
});

test("forward_priority sends the caller's priority to vLLM, negated; the default 0 as 0", async (t) => {
  const fake = await backend(t);
  const gw = await bed.gateway(config(fake.url, true), { t });
  for (const caller of [urgent, batch, plain]) {
    const answer = await gw.post('/v1/chat/completions', { model: 'chat', messages: USER_MESSAGE }, caller.auth);
    assert.equal(answer.status, 200);
  }
  const streamed = await gw.post('/v1/chat/completions', { model: 'chat', messages: USER_MESSAGE, stream: true }, urgent.auth);
  assert.equal(streamed.status, 200);
  assert.deepEqual(
    fake.requests.map((r) => r.body?.priority),
    [-7, 3, 0, -7],
  );
  const embedded = await gw.post('/v1/embeddings', { model: 'embed', input: 'hello' }, urgent.auth);
  assert.equal(embedded.status, 200);
  assert.equal(fake.requests.at(-1)?.body?.priority, undefined, 'embeddings carry no priority');
});

test('without forward_priority no priority is sent', async (t) => {
  const fake = await backend(t);
  const gw = await bed.gateway(config(fake.url, undefined), { t });
  assert.equal((await gw.post('/v1/chat/completions', { model: 'chat', messages: USER_MESSAGE }, urgent.auth)).status, 200);
  assert.equal(fake.requests[0]?.body?.priority, undefined);
  assert.ok(!('priority' in (fake.requests[0]?.body ?? {})));
});
