// When Redis keeps its connections open but answers nothing (the process stopped with SIGSTOP,
// as a stuck Redis or a network dropping packets would look): requests that need the store get
// the same 503 a Redis that is down gives, within the command timeout instead of hanging,
// /readyz says not ready, and everything comes back by itself once Redis answers again. Each
// test has a timeout, so a gateway that hangs fails it instead of hanging the run.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { waitUntil } from '../http/helpers.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { danaKey, pricedConfig } from '../../support/priced-config.ts';
import { HANG_MS } from '../../support/patience.ts';

const { headers: dana, user } = danaKey();
const config = pricedConfig(user);

/** Long enough for a request that waits out the command timeout, and for the waits below; far shorter than a hang. */
const TEST_TIMEOUT_MS = HANG_MS;

const bed = testBed({ redis: true });
let closed: TestGateway;
let open: TestGateway;
before(async () => {
  const settings = { redisCommandTimeoutMs: 200 };
  closed = await bed.gateway(config, { settings });
  open = await bed.gateway(config, { settings: { ...settings, failOpen: true } });
});

const chat = (gw: TestGateway) =>
  gw.post('/v1/chat/completions', { model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }, dana);

test('with Redis answering, the gateways serve and are ready', { timeout: TEST_TIMEOUT_MS }, async () => {
  for (const gw of [closed, open]) {
    assert.equal((await chat(gw)).status, 200);
    assert.equal((await gw.get('/v1/me', dana)).status, 200);
    assert.equal((await gw.get('/readyz')).status, 200);
  }
});

test('with Redis not answering: 503 store_unavailable instead of a hang, and not ready', { timeout: TEST_TIMEOUT_MS }, async () => {
  bed.redis.pause();
  try {
    // The key is in the gateway's cache; the account is read from the store.
    const me = await closed.get('/v1/me', dana);
    assert.equal(me.status, 503, JSON.stringify(me.body));
    assert.equal(me.body.error.code, 'store_unavailable');
    // Priced: the budget cannot be checked (nor admitted on a lease, once Redis is known not to answer).
    const refused = await chat(closed);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'store_unavailable');
    // A key never seen cannot be checked: 503, the honest answer, not 401.
    const unknown = await closed.get('/v1/me', { authorization: `Bearer ${generateKey().secret}` });
    assert.equal(unknown.status, 503, JSON.stringify(unknown.body));
    const notReady = (await closed.get('/readyz')).body;
    assert.deepEqual([notReady.status, notReady.reason, notReady.redis.mode], ['not ready', 'the store (Redis) does not answer', 'single']);
    assert.equal((await closed.get('/readyz')).status, 503);

    // Failing open serves without accounting, and stays ready (it serves without the store).
    assert.equal((await chat(open)).status, 200);
    const ready = await waitUntil(
      () => open.get('/readyz'),
      (answer) => answer.body.store === 'unavailable',
    );
    assert.equal(ready.status, 200);
    assert.equal(ready.body.store, 'unavailable');
  } finally {
    bed.redis.resume();
  }
});

test('once Redis answers again, the gateways serve and are ready by themselves', { timeout: TEST_TIMEOUT_MS }, async () => {
  bed.redis.resume();
  const ready = await waitUntil(
    () => closed.get('/readyz'),
    (answer) => answer.status === 200,
  );
  assert.deepEqual(ready.body.status, 'ready');
  assert.equal(
    (
      await waitUntil(
        () => chat(closed),
        (answer) => answer.status === 200,
      )
    ).status,
    200,
  );
  assert.equal((await closed.get('/v1/me', dana)).status, 200);
  assert.equal(
    (
      await waitUntil(
        () => open.get('/readyz'),
        (answer) => answer.body.store === undefined,
      )
    ).status,
    200,
  );
});
