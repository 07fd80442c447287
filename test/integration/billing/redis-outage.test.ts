// When Redis goes away: priced routers fail closed with 503 (or serve without charging when the
// gateway is set to fail open), unpriced routers keep serving callers already known, the process
// stays up, and everything recovers by itself when Redis is back.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { chatModel, simulator } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { danaKey, pricedConfig } from '../../support/priced-config.ts';
import { eventually } from '../../support/eventually.ts';

const { key, user } = danaKey();
const config = pricedConfig(user, [chatModel('free', [simulator()])]);

const bed = testBed({ redis: true });
let closed: TestGateway;
let open: TestGateway;
before(async () => {
  closed = await bed.gateway(config);
  open = await bed.gateway(config, { settings: { failOpen: true } });
});

const chat = (gw: TestGateway, model: string) =>
  gw.post(
    '/v1/chat/completions',
    { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 },
    { authorization: `Bearer ${key}` },
  );

test('with Redis up, both gateways serve both routers', async () => {
  for (const gw of [closed, open]) for (const model of ['priced', 'free']) assert.equal((await chat(gw, model)).status, 200);
});

test('with Redis down: priced routers fail closed with 503, unpriced ones serve, fail-open serves both', async () => {
  await bed.redis.stopKeepingData();
  const refused = await chat(closed, 'priced');
  assert.equal(refused.status, 503);
  assert.equal(refused.body.error.code, 'store_unavailable');
  assert.match(refused.body.error.message, /Budgets cannot be checked right now/);
  assert.equal((await chat(closed, 'free')).status, 200);
  assert.equal((await chat(open, 'priced')).status, 200);
  // A key the gateway has never seen cannot be checked either: 503, not 401 and not a 500.
  const unknown = await closed.post(
    '/v1/chat/completions',
    { model: 'free', messages: [{ role: 'user', content: 'hi' }] },
    { authorization: `Bearer ${generateKey().secret}` },
  );
  assert.equal(unknown.status, 503);
  assert.equal((await closed.get('/healthz')).status, 200, 'the process stays up');
  // Not ready while priced requests and new keys get 503; the gateway failing open serves on, so stays ready.
  const notReady = await closed.get('/readyz');
  assert.equal(notReady.status, 503);
  // It says which Redis it waits for: no primary while it is down.
  assert.deepEqual(notReady.body, {
    status: 'not ready',
    reason: 'the store (Redis) does not answer',
    redis: { mode: 'single', primary: null, replicas: notReady.body.redis.replicas },
  });
  const ready = await open.get('/readyz');
  assert.equal(ready.status, 200);
  assert.equal(ready.body.store, 'unavailable');
});

test('when Redis is back the gateways recover by themselves', async () => {
  await bed.redis.restart();
  await eventually(async () => (await chat(closed, 'priced')).status === 200, 'a chat served again');
  assert.equal((await closed.get('/readyz')).status, 200);
});
