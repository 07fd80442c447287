// Long prompts over HTTP (issue 13), on the in-memory store and on Redis: a user with no budget
// room left is refused before a long prompt is counted, the room asked for by that check is given
// back, and the simulator bounds its own work with a 400.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { microsToDecimal } from '../../../gateway/metering/cost.ts';
import type { TestGateway } from '../../support/gateway.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';

const broke = generateKey().secret;
const able = generateKey().secret;
/** 150,000 letters without a space: o200k makes 37,500 tokens of it (4 letters each). */
const RUN = 'c'.repeat(150_000);

const CONFIG: GatewayConfig = {
  users: [
    { id: 'broke', name: 'Broke', budget: 0.001, keys: [{ name: 'b', key: '${BROKE}' }] },
    { id: 'able', name: 'Able', budget: 1, keys: [{ name: 'a', key: '${ABLE}' }] },
  ],
  models: [
    {
      id: 'priced',
      type: 'text-generation',
      costs: { prompt_tokens: '1', completion_tokens: '2' },
      providers: [{ model: 'sim', type: 'simulator' }],
    },
    { id: 'vectors', type: 'text-embeddings-inference', providers: [{ model: 'sim', type: 'simulator' }] },
  ],
};

const bed = testBed({ redis: true });

for (const store of ['memory', 'redis'] as const) {
  describe(`on the ${store} store`, () => {
    let gw: TestGateway;
    before(async () => {
      // Without leases on Redis: an open lease counts as reserved until it is given back.
      gw = await bed.gateway(CONFIG, {
        store,
        env: { BROKE: broke, ABLE: able },
        settings: store === 'redis' ? { leaseRequests: 0 } : {},
      });
    });
    after(() => gw.close());

    const chat = (key: string, content: string) =>
      gw.post(
        '/v1/chat/completions',
        { model: 'priced', messages: [{ role: 'user', content }], max_tokens: 10 },
        { authorization: `Bearer ${key}` },
      );

    test('a user without room for a long prompt gets 402 from the check made before counting it', async () => {
      const refused = await chat(broke, RUN);
      assert.equal(refused.status, 402);
      assert.equal(refused.body.error.code, 'insufficient_budget');
      // The amount refused is the least the hold can come to (the prompt bounded by its length,
      // 150,000 / 128 tokens at least), not the hold of its counted 37,500 tokens: it was not counted.
      const least = BigInt(Math.ceil(150_000 / 128) + 3 + 3) * 1n + 10n * 2n; // µ$ at $1 and $2 per million
      assert.match(refused.body.error.message, new RegExp(`may cost up to ${microsToDecimal(least).replace('.', '\\.')} `));
    });

    test('a user with room is served, and the room the check asked for is given back', async () => {
      const answer = await chat(able, `${RUN} and a question`);
      assert.equal(answer.status, 200);
      const account = async () => (await gw.get('/v1/me', { authorization: `Bearer ${able}` })).body;
      // Settlement follows the answer: ask until it has charged what the answer cost.
      let me = await account();
      for (let i = 0; i < 100 && me.spent !== answer.body.usage.cost; i++) me = await account();
      assert.equal(me.spent, answer.body.usage.cost);
      assert.equal(me.reserved, 0, 'nothing is held once the request is over');
    });

    test('the simulator refuses embeddings past its bound with a 400, not a 500', async () => {
      const answer = await gw.post('/v1/embeddings', {
        model: 'vectors',
        input: Array.from({ length: 17 }, (_, i) => `text ${i}`),
        dimensions: 65_536,
      });
      assert.equal(answer.status, 400, JSON.stringify(answer.body).slice(0, 300));
      assert.equal(answer.body.error.code, 'upstream_rejected');
      assert.match(
        answer.body.error.message,
        /at most 1048576 embedding values per request \(inputs × dimensions\), and this asks for 17 × 65536/,
      );
    });
  });
}
