// Redis coming back empty (restarted without persistence, or flushed) takes every user and key
// with it, the bootstrap admin's included, and the catalog. The gateway notices (its seed
// marker is gone) and seeds the store again as at start-up: the admin key, the configuration
// file's users with their keys, and its routers, without a restart or a SIGHUP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { hashKey } from '../../../core/accounts/api-keys.ts';
import { keys } from '../../../core/store/redis/keys.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { waitUntil } from '../http/helpers.ts';
import { danaKey, pricedConfig } from '../../support/priced-config.ts';
import { HANG_MS } from '../../support/patience.ts';

const { key, headers: dana, user } = danaKey();
const config = pricedConfig(user);

const bed = testBed({ redis: true });
let gw: TestGateway;
let raw: Redis;
before(async () => {
  gw = await bed.gateway(config);
  raw = new Redis(bed.redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
});
after(() => {
  raw.disconnect();
});

const chat = () => gw.post('/v1/chat/completions', { model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }, dana);

/** Everything seeded is in Redis and works: the keys (looked up in Redis itself), the user, the router. */
async function assertSeeded(): Promise<void> {
  // Polls for the admin key, in Redis itself: the gateway's key cache would hide its absence.
  const adminKey = await waitUntil(
    () => raw.exists(keys.apiKey(hashKey(gw.adminKey))),
    (found) => found === 1,
  );
  assert.equal(adminKey, 1, 'the bootstrap admin key is in Redis again');
  const user = await waitUntil(
    () => gw.get('/v1/admin/users/dana'),
    (answer) => answer.status === 200,
  );
  assert.equal(user.status, 200, JSON.stringify(user.body));
  assert.equal(await raw.exists(keys.apiKey(hashKey(key))), 1, "the file user's key is in Redis again");
  const routers = await waitUntil(
    () => gw.get('/v1/admin/routers'),
    (answer) => answer.body.data?.some((r: { name: string }) => r.name === 'priced'),
  );
  assert.ok(
    routers.body.data.some((r: { name: string }) => r.name === 'priced'),
    JSON.stringify(routers.body),
  );
  const answer = await waitUntil(chat, (a) => a.status === 200);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal((await gw.get('/v1/me', dana)).status, 200);
}

test('seeded at start-up', { timeout: HANG_MS }, async () => {
  await assertSeeded();
});

test('Redis flushed: the admin key, the file users and routers come back', { timeout: HANG_MS }, async () => {
  await raw.flushall();
  await assertSeeded();
});

test('Redis restarted empty: the admin key, the file users and routers come back', { timeout: HANG_MS }, async () => {
  await bed.redis.restart();
  await assertSeeded();
});
