// The admin API's users and their keys, through a real gateway: create, list, read, update
// (a merge validated whole), delete; keys shown once and refused once revoked or expired; 401
// without a valid key and 403 for a non-admin; a budget PATCH applies to the next request.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { ADMIN_REQUIRED, assertError, bearer, chat, conflict, createUser, invalid, notFound, waitUntil, type TestUser } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

let gw: TestGateway;
let user: TestUser;

before(async () => {
  const config: GatewayConfig = {
    models: [
      {
        id: 'priced',
        type: 'text-generation',
        costs: { prompt_tokens: '1', completion_tokens: '2' },
        providers: [{ model: 'sim', type: 'simulator' }],
      },
    ],
  };
  gw = await bed.gateway(config);
  user = await createUser(gw, { name: 'Plain user' });
});

describe('POST /v1/admin/users', () => {
  test('creates a user with a generated id, the defaults and an empty balance', async () => {
    const answer = await gw.post('/v1/admin/users', { name: 'Ann', budget: '12.5', budget_period: 'monthly' });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const created = answer.body;
    assert.match(created.id, /^u-[0-9a-f]{12}$/);
    assert.deepEqual(
      { ...created, created_at: undefined, period_start: undefined, period_end: undefined },
      {
        object: 'user',
        id: created.id,
        name: 'Ann',
        role: 'user',
        team: null,
        budget: 12.5,
        budget_period: 'monthly',
        allowed_routers: null,
        rate_limits: null,
        priority: null,
        subjects: null,
        created_at: undefined,
        spent: 0,
        reserved: 0,
        remaining: 12.5,
        period_start: undefined,
        period_end: undefined,
      },
    );
    assert.ok(!Number.isNaN(Date.parse(created.created_at)));
    assert.ok(Date.parse(created.period_start) <= Date.now() && Date.now() < Date.parse(created.period_end));
  });

  test('keeps a given id, and an unlimited user has remaining null and no period', async () => {
    const answer = await gw.post('/v1/admin/users', {
      id: 'team-a',
      name: 'Team A',
      allowed_routers: ['priced'],
      rate_limits: { requests_per_minute: 10 },
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.equal(answer.body.id, 'team-a');
    assert.equal(answer.body.budget, null);
    assert.equal(answer.body.remaining, null);
    assert.equal(answer.body.period_start, null);
    assert.deepEqual(answer.body.allowed_routers, ['priced']);
    assert.deepEqual(answer.body.rate_limits, { requests_per_minute: 10 });
  });

  test('an id already taken is a 409', async () => {
    assertError(
      await gw.post('/v1/admin/users', { id: user.id, name: 'Again' }),
      conflict('id', `A user with id "${user.id}" already exists`),
    );
  });

  const cases: [string, unknown, string | null, string | RegExp][] = [
    ['too many decimals in budget', { name: 'x', budget: '0.1234567' }, 'budget', /^budget: amount must have at most 6 decimal places/],
    ['a negative budget', { name: 'x', budget: -1 }, 'budget', 'budget: amount must not be negative'],
    ['a missing name', { budget: 1 }, 'name', 'name: is required'],
    ['an unknown role', { name: 'x', role: 'root' }, 'role', /^role: /],
    ['an unknown period', { name: 'x', budget_period: 'hourly' }, 'budget_period', /^budget_period: /],
    ['an id that is not a ResourceId', { id: 'Not Valid', name: 'x' }, 'id', /^id: must be lowercase/],
    ['an unknown field', { name: 'x', credits: 3 }, 'credits', 'credits: unknown field'],
    [
      'a rate limit of 0',
      { name: 'x', rate_limits: { requests_per_minute: 0 } },
      'rate_limits.requests_per_minute',
      /^rate_limits\.requests_per_minute: /,
    ],
    ['an invalid router name', { name: 'x', allowed_routers: ['-bad'] }, 'allowed_routers[0]', /^allowed_routers\[0\]: must start with/],
    ['a body that is not an object', [1, 2], null, 'The request body must be a JSON object'],
  ];
  for (const [what, body, param, message] of cases) {
    test(`400 with the field's path for ${what}`, async () => {
      assertError(await gw.post('/v1/admin/users', body), invalid(param, message));
    });
  }
});

describe('GET /v1/admin/users', () => {
  test('pages through every user by id, with next until the last page', async () => {
    for (const id of ['page-1', 'page-2', 'page-3']) assert.equal((await gw.post('/v1/admin/users', { id, name: id })).status, 201);
    const all = await gw.get('/v1/admin/users?limit=500');
    assert.equal(all.status, 200);
    assert.equal(all.body.object, 'list');
    assert.equal(all.body.next, null);
    const ids: string[] = all.body.data.map((u: any) => u.id);
    assert.deepEqual(ids, [...ids].sort());
    for (const id of ['admin', 'page-1', 'page-2', 'page-3', user.id]) assert.ok(ids.includes(id), id);

    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 100; pages++) {
      const page: any = await gw.get(`/v1/admin/users?limit=2${after ? `&after=${after}` : ''}`);
      assert.equal(page.status, 200);
      assert.ok(page.body.data.length <= 2);
      seen.push(...page.body.data.map((u: any) => u.id));
      after = page.body.next;
      if (after === null) break;
    }
    assert.deepEqual(seen, ids);
  });

  test('limit is 1 to 500 and unknown parameters are refused', async () => {
    assertError(await gw.get('/v1/admin/users?limit=0'), invalid('limit', 'limit: must be at least 1'));
    assertError(await gw.get('/v1/admin/users?limit=501'), invalid('limit', 'limit: must be at most 500'));
    assertError(await gw.get('/v1/admin/users?limit=ten'), invalid('limit', 'limit: must be a whole number'));
    assertError(await gw.get('/v1/admin/users?page=2'), invalid('page', 'page: unknown field'));
  });
});

describe('GET /v1/admin/users/:id', () => {
  test('reads one user', async () => {
    const answer = await gw.get(`/v1/admin/users/${user.id}`);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.id, user.id);
    assert.equal(answer.body.name, 'Plain user');
  });

  test('an unknown user is a 404', async () => {
    assertError(await gw.get('/v1/admin/users/nobody'), notFound('User "nobody" not found'));
  });
});

describe('PATCH /v1/admin/users', () => {
  test('merges onto the stored user: absent fields are kept, null resets to unlimited', async () => {
    const created = await gw.post('/v1/admin/users', {
      name: 'Patchy',
      budget: 5,
      budget_period: 'daily',
      rate_limits: { requests_per_minute: 3 },
    });
    const id = created.body.id;
    const renamed = await gw.patch(`/v1/admin/users/${id}`, { name: 'Patched', rate_limits: { tokens_per_day: 1000 } });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.name, 'Patched');
    assert.equal(renamed.body.budget, 5);
    assert.equal(renamed.body.budget_period, 'daily');
    assert.deepEqual(renamed.body.rate_limits, { requests_per_minute: 3, tokens_per_day: 1000 });

    const unlimited = await gw.patch(`/v1/admin/users/${id}`, { budget: null, budget_period: null });
    assert.equal(unlimited.status, 200);
    assert.equal(unlimited.body.budget, null);
    assert.equal(unlimited.body.remaining, null);
    assert.equal(unlimited.body.period_end, null);
    assert.equal((await gw.get(`/v1/admin/users/${id}`)).body.budget, null, 'stored');
  });

  test("PATCH /v1/admin/users takes the id in the body (the spec's path has none)", async () => {
    const created = await gw.post('/v1/admin/users', { name: 'Body id' });
    const answer = await gw.patch('/v1/admin/users', { id: created.body.id, budget: '0.25' });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.budget, 0.25);
    assertError(await gw.patch('/v1/admin/users', { budget: 1 }), invalid('id', /^id: is required/));
    assertError(await gw.patch('/v1/admin/users', { id: 'nobody', budget: 1 }), notFound('User "nobody" not found'));
  });

  test('the merged user is validated whole; the id cannot change', async () => {
    assertError(
      await gw.patch(`/v1/admin/users/${user.id}`, { budget: '1.0000001' }),
      invalid('budget', /^budget: amount must have at most 6 decimal places/),
    );
    assertError(await gw.patch(`/v1/admin/users/${user.id}`, { name: '' }), invalid('name', 'name: must not be empty'));
    assertError(await gw.patch(`/v1/admin/users/${user.id}`, { created_at: 'now' }), invalid('created_at', 'created_at: unknown field'));
    assertError(await gw.patch(`/v1/admin/users/${user.id}`, { id: 'other' }), invalid('id', /^id: a user's id cannot be changed/));
    assertError(await gw.patch('/v1/admin/users/nobody', { name: 'x' }), notFound());
  });

  test('an admin cannot remove their own admin role', async () => {
    assertError(await gw.patch('/v1/admin/users/admin', { role: 'user' }), invalid('role', /own admin role/));
  });
});

describe('budgets apply to the next request', () => {
  test('budget 0 on a priced router is a 402; raised by PATCH, the next request succeeds', async () => {
    const poor = await createUser(gw, { name: 'Poor', budget: 0 });
    assertError(await chat(gw, 'priced', poor.auth), { status: 402, code: 'insufficient_budget', type: 'insufficient_quota' });
    const raised = await gw.patch(`/v1/admin/users/${poor.id}`, { budget: 1 });
    assert.equal(raised.status, 200);
    const answer = await chat(gw, 'priced', poor.auth);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.ok(answer.body.usage.cost > 0);
    // Settlement is written just after the answer.
    const spent = await waitUntil(
      () => gw.get(`/v1/admin/users/${poor.id}`),
      (a) => a.body.spent > 0,
    );
    assert.equal(spent.body.spent, answer.body.usage.cost);
    assert.equal(spent.body.remaining, Number((1 - answer.body.usage.cost).toFixed(6)));
  });
});

describe('DELETE /v1/admin/users/:id', () => {
  test('deletes the user, whose keys then stop working', async () => {
    const doomed = await createUser(gw, { name: 'Doomed' });
    assert.equal((await gw.get('/v1/me', doomed.auth)).status, 200);
    const answer = await gw.delete(`/v1/admin/users/${doomed.id}`);
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { object: 'user', id: doomed.id, deleted: true });
    assertError(await gw.get(`/v1/admin/users/${doomed.id}`), notFound());
    assertError(await gw.get('/v1/me', doomed.auth), { status: 401, code: 'invalid_api_key' });
    assertError(await gw.delete(`/v1/admin/users/${doomed.id}`), notFound(`User "${doomed.id}" not found`));
  });

  test('an admin cannot delete their own user', async () => {
    assertError(await gw.delete('/v1/admin/users/admin'), invalid('id', /cannot delete your own user/));
  });
});

describe('API keys of a user', () => {
  test('the secret is shown once, at creation, and never again (nor the hash)', async () => {
    const created = await gw.post(`/v1/admin/users/${user.id}/keys`, { name: 'ci' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { key: secret, ...record } = created.body;
    assert.match(secret, /^tg-/);
    assert.deepEqual(Object.keys(record).sort(), [
      'allowed_routers',
      'budget',
      'budget_period',
      'created_at',
      'expires_at',
      'hint',
      'id',
      'name',
      'object',
      'rate_limits',
      'revoked_at',
      'user_id',
    ]);
    assert.equal(record.budget, null, 'a key without limits of its own');
    assert.equal(record.hint, `tg-…${secret.slice(-4)}`);
    assert.equal(record.user_id, user.id);
    assert.equal((await gw.get('/v1/me', bearer(secret))).body.id, user.id, 'the new key works');

    for (const answer of [
      await gw.get(`/v1/admin/users/${user.id}/keys`),
      await gw.get('/v1/me/keys', user.auth),
      await gw.get('/v1/me', bearer(secret)),
    ]) {
      assert.equal(answer.status, 200);
      const text = JSON.stringify(answer.body);
      assert.ok(!text.includes(secret), 'secret shown again');
      assert.ok(!text.includes('"hash"'), 'hash shown');
      assert.ok(!/[0-9a-f]{64}/.test(text), 'something like a hash shown');
    }
    const listed = (await gw.get(`/v1/admin/users/${user.id}/keys`)).body.data;
    assert.deepEqual(
      listed.find((k: any) => k.id === record.id),
      record,
    );
  });

  test('a revoked key gets 401, and revoking an unknown key is a 404', async () => {
    const created = await gw.post(`/v1/admin/users/${user.id}/keys`, { name: 'to revoke' });
    const revoked = await gw.delete(`/v1/admin/users/${user.id}/keys/${created.body.id}`);
    assert.equal(revoked.status, 200);
    assert.ok(!Number.isNaN(Date.parse(revoked.body.revoked_at)));
    assert.equal(revoked.body.key, undefined);
    assertError(await gw.get('/v1/me', bearer(created.body.key)), {
      status: 401,
      code: 'invalid_api_key',
      message: 'This API key has been revoked',
    });
    assertError(await gw.delete(`/v1/admin/users/${user.id}/keys/k-000000000000`), notFound());
    assertError(await gw.delete(`/v1/admin/users/nobody/keys/${created.body.id}`), notFound('User "nobody" not found'));
  });

  test('a key with expires_at is refused once that time has passed', async () => {
    const expiresAt = new Date(Date.now() + 1000).toISOString();
    const created = await gw.post(`/v1/admin/users/${user.id}/keys`, { name: 'short-lived', expires_at: expiresAt });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.expires_at, expiresAt);
    const answer = await waitUntil(
      () => gw.get('/v1/me', bearer(created.body.key)),
      (a) => a.status !== 200,
    );
    assertError(answer, { status: 401, code: 'invalid_api_key', message: 'This API key has expired' });
  });

  test('a key needs a name and an expiry in the future; the user must exist', async () => {
    assertError(await gw.post(`/v1/admin/users/${user.id}/keys`, {}), invalid('name', 'name: is required'));
    assertError(
      await gw.post(`/v1/admin/users/${user.id}/keys`, { name: 'x', expires_at: '2000-01-01T00:00:00Z' }),
      invalid('expires_at', 'expires_at: must be in the future'),
    );
    assertError(
      await gw.post(`/v1/admin/users/${user.id}/keys`, { name: 'x', expires_at: 'tomorrow' }),
      invalid('expires_at', /^expires_at: must be an ISO 8601 date-time/),
    );
    assertError(await gw.post('/v1/admin/users/nobody/keys', { name: 'x' }), notFound('User "nobody" not found'));
    assertError(await gw.get('/v1/admin/users/nobody/keys'), notFound());
  });
});

describe('authentication and permission', () => {
  const routes: [string, string, unknown?][] = [
    ['POST', '/v1/admin/users', { name: 'x' }],
    ['GET', '/v1/admin/users'],
    ['GET', '/v1/admin/users/admin'],
    ['PATCH', '/v1/admin/users', { id: 'admin', budget: 0 }],
    ['PATCH', '/v1/admin/users/admin', { budget: 0 }],
    ['DELETE', '/v1/admin/users/admin'],
    ['POST', '/v1/admin/users/admin/keys', { name: 'x' }],
    ['GET', '/v1/admin/users/admin/keys'],
    ['DELETE', '/v1/admin/users/admin/keys/some-key'],
  ];

  for (const [method, path, body] of routes) {
    test(`${method} ${path}: 403 for a non-admin key, 401 without a key or with an unknown one`, async () => {
      const send = (headers: Record<string, string>) =>
        fetch(gw.url + path, {
          method,
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() }));
      assertError(await send(user.auth), ADMIN_REQUIRED);
      assertError(await send({}), { status: 401, code: 'invalid_api_key', type: 'authentication_error', message: /^Missing API key/ });
      assertError(await send(bearer('tg-not-a-real-key-000000000000000000000000')), {
        status: 401,
        code: 'invalid_api_key',
        message: 'Invalid API key',
      });
    });
  }

  test('the admin is unchanged after the refused attempts', async () => {
    const admin = await gw.get('/v1/admin/users/admin');
    assert.equal(admin.body.role, 'admin');
    assert.equal(admin.body.budget, null);
  });
});
