// Budgets at three levels over HTTP: a request is charged to its key, its user and its team at
// once; the level with least room refuses, and the refusal names it; answers say how much room the
// tightest level has left; a key and a team narrow the routers a user may call.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const keys = {
  ann: generateKey().secret,
  ben: generateKey().secret,
  app: generateKey().secret,
  other: generateKey().secret,
  solo: generateKey().secret,
  rl1: generateKey().secret,
  rl2: generateKey().secret,
};
// 10 completion tokens at 1000 per million: 0.01 a request, held and charged alike.
const ask = { messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };

let gw: TestGateway;
before(async () => {
  gw = await bed.gateway(
    {
      teams: [
        { id: 'red', name: 'Red team', budget: '0.03' },
        { id: 'blue', name: 'Blue team', allowed_routers: ['priced'], rate_limits: { requests_per_minute: 3 } },
      ],
      users: [
        { id: 'ann', name: 'Ann', team: 'red', budget: '10', keys: [{ name: 'k', key: '${ANN}' }] },
        { id: 'ben', name: 'Ben', team: 'red', keys: [{ name: 'k', key: '${BEN}' }] },
        {
          id: 'dev',
          name: 'Dev',
          budget: '10',
          keys: [
            { name: 'app', key: '${APP}', budget: '0.02', allowed_routers: ['priced'] },
            { name: 'other', key: '${OTHER}' },
          ],
        },
        { id: 'solo', name: 'Solo', keys: [{ name: 'k', key: '${SOLO}' }] },
        { id: 'rl1', name: 'One', team: 'blue', keys: [{ name: 'k', key: '${RL1}' }] },
        { id: 'rl2', name: 'Two', team: 'blue', keys: [{ name: 'k', key: '${RL2}' }] },
      ],
      models: [
        {
          id: 'priced',
          type: 'text-generation',
          costs: { prompt_tokens: 0, completion_tokens: 1000 },
          providers: [{ model: 'sim', type: 'simulator' }],
        },
        { id: 'free', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] },
      ],
    },
    {
      env: {
        ANN: keys.ann,
        BEN: keys.ben,
        APP: keys.app,
        OTHER: keys.other,
        SOLO: keys.solo,
        RL1: keys.rl1,
        RL2: keys.rl2,
      },
    },
  );
});

const chat = (key: string, model = 'priced') => gw.post('/v1/chat/completions', { model, ...ask }, { authorization: `Bearer ${key}` });

test("a team's users share its budget: past it, each is refused with 402 naming the team, whatever their own budget", async () => {
  const statuses = [];
  for (const key of [keys.ann, keys.ben, keys.ann]) statuses.push((await chat(key)).status);
  assert.deepEqual(statuses, [200, 200, 200]);
  for (const key of [keys.ann, keys.ben]) {
    const refused = await chat(key);
    assert.equal(refused.status, 402);
    assert.equal(refused.body.error.code, 'insufficient_budget');
    assert.match(refused.body.error.message, /^Insufficient team budget: 0 remaining, and this request may cost up to 0\.01 /);
    assert.equal(refused.headers.get('x-tollgate-limit-level'), 'team');
  }
  assert.equal((await chat(keys.solo)).status, 200, 'a user in no team is not counted in it');
});

test("a key's budget is its own: past it the key is refused naming the key, and the user's other key still works", async () => {
  const first = await chat(keys.app);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('x-tollgate-budget-remaining'), '0.01');
  assert.equal(first.headers.get('x-tollgate-budget-level'), 'key');
  assert.equal((await chat(keys.app)).status, 200);
  const refused = await chat(keys.app);
  assert.equal(refused.status, 402);
  assert.match(refused.body.error.message, /^Insufficient key budget: 0 remaining/);
  const other = await chat(keys.other);
  assert.equal(other.status, 200);
  assert.equal(other.headers.get('x-tollgate-budget-level'), 'user');
  assert.equal(other.headers.get('x-tollgate-budget-remaining'), '9.97', "the user's 10, less the key's two and this one's hold");
});

test('a key or a team narrows the routers its user may call', async () => {
  const byKey = await chat(keys.app, 'free');
  assert.equal(byKey.status, 403);
  assert.equal(byKey.body.error.code, 'model_not_allowed');
  assert.equal((await chat(keys.other, 'free')).status, 200);
  assert.equal((await chat(keys.rl1, 'free')).status, 403);
});

test("a team's rate limit counts all its users together, and its 429 names the team", async () => {
  assert.equal((await chat(keys.rl1)).status, 200);
  assert.equal((await chat(keys.rl2)).status, 200);
  assert.equal((await chat(keys.rl1)).status, 200);
  const refused = await chat(keys.rl2);
  assert.equal(refused.status, 429);
  assert.match(refused.body.error.message, /^Team rate limit reached: 3 requests per minute on this model; retry in \d+s$/);
  assert.equal(refused.headers.get('x-tollgate-limit-level'), 'team');
});

test('answers of a user without any budget carry no budget headers', async () => {
  const answer = await chat(keys.solo, 'free');
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get('x-tollgate-budget-remaining'), null);
});
