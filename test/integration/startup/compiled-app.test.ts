// What `npm start` and the image run: dist/app, the sources compiled by `npm run build` (which the
// test command runs first), with the files the modules read beside them. It must serve as the
// sources do: a priced chat with its usage block and budget charged in Redis (the Lua scripts),
// a prompt counted (the o200k rank table), and the Playground.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import type { GatewayProcess } from '../../support/gateway-process.ts';
import { eventually } from '../../support/eventually.ts';
import { testBed } from '../../support/test-bed.ts';

const key = generateKey().secret;
const bed = testBed({ redis: true });
let gateway: GatewayProcess;

before(async () => {
  gateway = await bed.process(
    {
      users: [{ id: 'carol', name: 'Carol', budget: '1', keys: [{ name: 'k', key: '${USER_KEY}' }] }],
      models: [
        {
          id: 'chat',
          type: 'text-generation',
          costs: { prompt_tokens: 2, completion_tokens: 8 },
          providers: [{ model: 'sim', type: 'simulator' }],
        },
      ],
    },
    { env: { USER_KEY: key }, compiled: true },
  );
});

test('the compiled gateway answers a priced chat with its usage, and charges the budget in Redis', async () => {
  const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 5 }),
  });
  assert.equal(answer.status, 200);
  const body = (await answer.json()) as { model: string; usage: { prompt_tokens: number; completion_tokens: number; cost: number } };
  assert.equal(body.model, 'chat');
  assert.ok(body.usage.prompt_tokens > 0 && body.usage.completion_tokens === 5);
  assert.ok(body.usage.cost > 0);
  // Settlement follows the answer: the charge shows once it is written.
  const spentOf = async () =>
    ((await (await fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json()) as { spent: string }).spent;
  await eventually(async () => Number(await spentOf()) === body.usage.cost, 'the chat charged to the budget');
});

test('the compiled gateway serves the Playground', async () => {
  const page = await fetch(`${gateway.url}/playground/`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<script/);
});
