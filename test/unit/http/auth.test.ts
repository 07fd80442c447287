// Access is declared by each route and enforced on the route a request matched: a route that
// declares nothing needs a key (so a route added tomorrow cannot be left open by forgetting),
// PUBLIC routes need none, and routes of an adminOnly scope need an admin's key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { hashKey } from '../../../core/accounts/api-keys.ts';
import { adminOnly, PUBLIC, registerAuth, type KeyLookup } from '../../../gateway/http/auth.ts';
import { LogThrottle } from '../../../gateway/observability/log-throttle.ts';
import { errorHandler } from '../../../gateway/http/error-handler.ts';
import type { ApiKeyRecord, UserRecord } from '../../../core/store/accounts.ts';

const user = (id: string, role: 'admin' | 'user'): UserRecord => ({
  id,
  name: id,
  role,
  team: null,
  budget: null,
  budget_period: null,
  allowed_routers: null,
  budget_alerts: null,
  soft_budget: false,
  priority: 0,
  rate_limits: null,
  subjects: null,
  created_at: '2030-01-01T00:00:00.000Z',
});
const key = (userId: string, secret: string): ApiKeyRecord => ({
  id: `k-${userId}`,
  user_id: userId,
  name: 'k',
  hash: hashKey(secret),
  hint: 'tg-…',
  created_at: '2030-01-01T00:00:00.000Z',
  expires_at: null,
  revoked_at: null,
});
const KEYS = new Map([
  [hashKey('tg-user'), { key: key('ann', 'tg-user'), user: user('ann', 'user') }],
  [hashKey('tg-admin'), { key: key('root', 'tg-admin'), user: user('root', 'admin') }],
]);
const lookup: KeyLookup = { findKey: async (hash) => KEYS.get(hash) };

async function app() {
  const app = Fastify();
  app.setErrorHandler(errorHandler(1024, new LogThrottle()));
  registerAuth(app, { keys: lookup }, () => Date.parse('2030-06-01T00:00:00Z'));
  app.get('/undeclared', () => 'served');
  app.get('/open', { config: PUBLIC }, () => 'served');
  app.register(async (admin) => {
    adminOnly(admin);
    admin.get('/admin-only', () => 'served');
  });
  await app.ready();
  return app;
}

const statusOf = async (server: Awaited<ReturnType<typeof app>>, url: string, secret?: string) =>
  (await server.inject({ method: 'GET', url, headers: secret ? { authorization: `Bearer ${secret}` } : {} })).statusCode;

test('a route that declares no access needs a key (and an adminOnly scope elsewhere does not make it admin-only)', async () => {
  const server = await app();
  assert.equal(await statusOf(server, '/undeclared'), 401);
  assert.equal(await statusOf(server, '/undeclared', 'tg-unknown'), 401);
  assert.equal(await statusOf(server, '/undeclared', 'tg-user'), 200);
});

test('a PUBLIC route needs none', async () => {
  assert.equal(await statusOf(await app(), '/open'), 200);
});

test('a route of an adminOnly scope needs an admin key: 401 without a key, 403 with a user key', async () => {
  const server = await app();
  assert.equal(await statusOf(server, '/admin-only'), 401);
  assert.equal(await statusOf(server, '/admin-only', 'tg-user'), 403);
  assert.equal(await statusOf(server, '/admin-only', 'tg-admin'), 200);
});

test('a URL matching no route needs a key before it is told so', async () => {
  const server = await app();
  assert.equal(await statusOf(server, '/nothing'), 401);
  assert.equal(await statusOf(server, '/nothing', 'tg-user'), 404);
});
