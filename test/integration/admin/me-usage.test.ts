// The caller's own account (/v1/me and its keys) and usage (/v1/usage, /v1/usage/daily), for
// any valid key: what a request costs shows up in both, pages add up to the totals, and only
// admins see other people's usage.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError, bearer, chat, createUser, invalid, notFound, usageRecords, waitUntil, type TestUser } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

let gw: TestGateway;

before(async () => {
  gw = await bed.gateway({
    models: [
      {
        id: 'priced',
        type: 'text-generation',
        aliases: ['priced-alias'],
        costs: { prompt_tokens: '1', completion_tokens: '2' },
        providers: [{ model: 'sim', type: 'simulator' }],
      },
      { id: 'free', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] },
    ],
  });
});

const micros = (amount: number) => Math.round(amount * 1_000_000);

describe('GET /v1/me', () => {
  test('shows the caller, their balance and the key in use; a request made shows up in spent', async () => {
    const me = await createUser(gw, { name: 'Me', budget: 2, budget_period: 'weekly', allowed_routers: ['priced'] });
    const before = await gw.get('/v1/me', me.auth);
    assert.equal(before.status, 200, JSON.stringify(before.body));
    const { period_start, period_end, created_at, key, ...rest } = before.body;
    assert.deepEqual(rest, {
      object: 'user',
      id: me.id,
      name: 'Me',
      role: 'user',
      team: null,
      budget: 2,
      budget_period: 'weekly',
      allowed_routers: ['priced'],
      rate_limits: null,
      priority: null,
      subjects: null,
      spent: 0,
      reserved: 0,
      remaining: 2,
    });
    assert.equal(new Date(period_start).getUTCDay(), 1, 'weeks start on Monday');
    assert.equal(Date.parse(period_end) - Date.parse(period_start), 7 * 86_400_000);
    assert.ok(!Number.isNaN(Date.parse(created_at)));
    assert.deepEqual(Object.keys(key).sort(), [
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
    assert.equal(key.id, me.keyId);
    assert.equal(key.hint, `tg-…${me.key.slice(-4)}`);

    const answer = await chat(gw, 'priced', me.auth);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const after = await waitUntil(
      () => gw.get('/v1/me', me.auth),
      (a) => a.body.spent > 0,
    );
    assert.equal(after.body.spent, answer.body.usage.cost);
    assert.equal(after.body.reserved, 0);
    assert.equal(micros(after.body.remaining), micros(2) - micros(answer.body.usage.cost));
  });

  test('an admin sees their own account too', async () => {
    const answer = await gw.get('/v1/me');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.id, 'admin');
    assert.equal(answer.body.role, 'admin');
    assert.equal(answer.body.remaining, null);
  });

  test('401 without a key', async () => {
    const response = await fetch(`${gw.url}/v1/me`);
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as any).error.code, 'invalid_api_key');
  });
});

describe('/v1/me/keys', () => {
  test('a user makes, lists and revokes their own keys; the secret is shown once', async () => {
    const me = await createUser(gw, { name: 'Key owner' });
    const created = await gw.post('/v1/me/keys', { name: 'laptop' }, me.auth);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.key, /^tg-/);
    assert.equal(created.body.user_id, me.id);
    assert.equal((await gw.get('/v1/me', bearer(created.body.key))).body.key.id, created.body.id, 'the new key works');

    const listed = await gw.get('/v1/me/keys', me.auth);
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.data.map((k: any) => k.id).sort(), [me.keyId, created.body.id].sort());
    assert.ok(!JSON.stringify(listed.body).includes(created.body.key), 'secret shown again');
    assert.ok(listed.body.data.every((k: any) => k.key === undefined && k.hash === undefined));

    const revoked = await gw.delete(`/v1/me/keys/${created.body.id}`, me.auth);
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revoked_at);
    assertError(await gw.get('/v1/me', bearer(created.body.key)), {
      status: 401,
      code: 'invalid_api_key',
      message: 'This API key has been revoked',
    });
    assert.equal((await gw.get('/v1/me', me.auth)).status, 200, 'the other key still works');
  });

  test("someone else's key is a 404 and stays valid", async () => {
    const me = await createUser(gw, { name: 'Mallory' });
    const other = await createUser(gw, { name: 'Victim' });
    assertError(await gw.delete(`/v1/me/keys/${other.keyId}`, me.auth), notFound(`You have no API key "${other.keyId}"`));
    assert.equal((await gw.get('/v1/me', other.auth)).status, 200);
    assert.ok(!(await gw.get('/v1/me/keys', me.auth)).body.data.some((k: any) => k.id === other.keyId));
  });

  test('a key needs a name; an expiry must be in the future', async () => {
    const me = await createUser(gw, { name: 'Careless' });
    assertError(await gw.post('/v1/me/keys', { expires_at: null }, me.auth), invalid('name', 'name: is required'));
    assertError(await gw.post('/v1/me/keys', { name: 'old', expires_at: '2001-01-01T00:00:00+02:00' }, me.auth), invalid('expires_at'));
  });
});

describe('GET /v1/usage', () => {
  let alice: TestUser;
  let bob: TestUser;
  const costs: number[] = [];

  before(async () => {
    alice = await createUser(gw, { name: 'Alice' });
    bob = await createUser(gw, { name: 'Bob' });
    for (const max_tokens of [3, 5, 7]) {
      const answer = await chat(gw, 'priced-alias', alice.auth, { max_tokens });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      costs.push(answer.body.usage.cost);
    }
    assert.equal((await chat(gw, 'free', alice.auth)).status, 200);
    assert.equal((await chat(gw, 'free', bob.auth)).status, 200);
    await usageRecords(gw, alice.auth, 4);
    await usageRecords(gw, bob.auth, 1);
  });

  test("the caller's records, newest first, in snake_case with money as numbers", async () => {
    const answer = await gw.get('/v1/usage', alice.auth);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.object, 'list');
    assert.equal(answer.body.next, null);
    const records = answer.body.data;
    assert.equal(records.length, 4);
    const times = records.map((r: any) => Date.parse(r.time));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
    );
    const newestPriced = records.find((r: any) => r.model === 'priced');
    assert.deepEqual(Object.keys(newestPriced).sort(), [
      'audio_seconds',
      'cache_write_tokens',
      'cached_tokens',
      'charged',
      'completion_tokens',
      'cost',
      'endpoint',
      'id',
      'incomplete',
      'key_id',
      'kgco2eq',
      'kwh',
      'latency_ms',
      'model',
      'prompt_tokens',
      'provider',
      'requested_model',
      'status',
      'time',
      'total_tokens',
      'ttft_ms',
      'uncovered',
      'usage_anomaly',
      'user',
    ]);
    assert.equal(newestPriced.user, alice.id);
    assert.equal(newestPriced.key_id, alice.keyId);
    assert.equal(newestPriced.endpoint, 'chat');
    assert.equal(newestPriced.status, 200);
    assert.equal(newestPriced.provider, 'priced-0');
    assert.equal(newestPriced.completion_tokens, 7);
    assert.equal(newestPriced.total_tokens, newestPriced.prompt_tokens + 7);
    assert.equal(newestPriced.cost, costs[2]);
    assert.deepEqual([newestPriced.charged, newestPriced.uncovered, newestPriced.usage_anomaly], [costs[2], 0, null]);
    assert.equal(newestPriced.incomplete, false);
    assert.ok(
      records.every((r: any) => r.user === alice.id),
      'only her own',
    );
  });

  test('totals cover every page; pages walk all records once', async () => {
    const whole = await gw.get('/v1/usage', alice.auth);
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: any = await gw.get(`/v1/usage?limit=1${after ? `&after=${after}` : ''}`, alice.auth);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.equal(page.body.data.length, 1);
      assert.deepEqual(page.body.totals, whole.body.totals, 'totals of the whole filter on every page');
      seen.push(page.body.data[0].id);
      after = page.body.next;
      if (after === null) break;
    }
    assert.deepEqual(
      seen,
      whole.body.data.map((r: any) => r.id),
    );
    const totals = whole.body.totals;
    assert.equal(totals.requests, 4);
    assert.equal(
      micros(totals.cost),
      costs.reduce((sum, c) => sum + micros(c), 0),
    );
    assert.equal(totals.total_tokens, totals.prompt_tokens + totals.completion_tokens);
    assert.equal(
      totals.completion_tokens,
      whole.body.data.reduce((sum: number, r: any) => sum + r.completion_tokens, 0),
    );
  });

  test('model filters by router, an alias resolving to its router', async () => {
    for (const model of ['priced', 'priced-alias']) {
      const answer = await gw.get(`/v1/usage?model=${model}`, alice.auth);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.totals.requests, 3, model);
      assert.ok(answer.body.data.every((r: any) => r.model === 'priced'));
    }
    assert.equal((await gw.get('/v1/usage?model=never-called', alice.auth)).body.totals.requests, 0);
  });

  test('from and to bound the time range (ISO date-times or epoch milliseconds, both included)', async () => {
    const records = (await gw.get('/v1/usage', alice.auth)).body.data;
    const oldest = Date.parse(records.at(-1).time);
    const newest = Date.parse(records[0].time);
    const inRange = await gw.get(`/v1/usage?from=${oldest}&to=${new Date(newest).toISOString()}`, alice.auth);
    assert.equal(inRange.body.totals.requests, 4);
    const after = await gw.get(`/v1/usage?from=${newest + 1}`, alice.auth);
    assert.equal(after.body.totals.requests, 0);
    const before = await gw.get(`/v1/usage?to=${new Date(oldest - 1).toISOString()}`, alice.auth);
    assert.equal(before.body.totals.requests, 0);
  });

  test('bad parameters are a 400 naming them', async () => {
    assertError(
      await gw.get('/v1/usage?from=yesterday', alice.auth),
      invalid('from', /^from: must be epoch milliseconds or an ISO 8601 date-time/),
    );
    assertError(await gw.get('/v1/usage?from=2000&to=1000', alice.auth), invalid('to', 'to: must not be before from'));
    assertError(await gw.get('/v1/usage?limit=501', alice.auth), invalid('limit'));
    assertError(await gw.get('/v1/usage?after=page-2', alice.auth), invalid('after'));
    assertError(await gw.get('/v1/usage?router=priced', alice.auth), invalid('router', 'router: unknown field'));
  });

  test("a non-admin cannot read another user's usage; their own id is fine", async () => {
    assertError(await gw.get(`/v1/usage?user=${bob.id}`, alice.auth), {
      status: 403,
      code: 'forbidden',
      type: 'permission_error',
      param: 'user',
    });
    assertError(await gw.get(`/v1/usage/daily?user=${bob.id}`, alice.auth), { status: 403, code: 'forbidden', param: 'user' });
    assertError(await gw.get('/v1/usage/daily?router=priced', alice.auth), { status: 403, code: 'forbidden', param: 'router' });
    assert.equal((await gw.get(`/v1/usage?user=${alice.id}`, alice.auth)).body.totals.requests, 4);
  });

  test("an admin reads anyone's usage with user=", async () => {
    const answer = await gw.get(`/v1/usage?user=${bob.id}`);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.totals.requests, 1);
    assert.equal(answer.body.data[0].user, bob.id);
    assertError(await gw.get('/v1/usage?user=nobody'), notFound('User "nobody" not found', 'user'));
  });

  test('daily totals per UTC day, every day of the range listed', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const answer = await waitUntil(
      () => gw.get(`/v1/usage/daily?to=${today}`, alice.auth),
      (a) => a.body.totals?.requests >= 4,
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.user, alice.id);
    assert.equal(answer.body.router, null);
    assert.equal(answer.body.to, today);
    assert.equal(answer.body.data.length, 30);
    assert.equal(answer.body.data.at(-1).date, today);
    const whole = (await gw.get('/v1/usage', alice.auth)).body.totals;
    assert.deepEqual(answer.body.totals, whole);
    // Records made around midnight UTC may fall on two days; all of them are in the range.
    assert.equal(
      answer.body.data.reduce((sum: number, d: any) => sum + d.requests, 0),
      4,
    );

    const range = await gw.get('/v1/usage/daily?from=2020-02-27&to=2020-03-01', alice.auth);
    assert.deepEqual(
      range.body.data.map((d: any) => d.date),
      ['2020-02-27', '2020-02-28', '2020-02-29', '2020-03-01'],
    );
    assert.ok(range.body.data.every((d: any) => d.requests === 0 && d.cost === 0));
  });

  test('admins read daily totals of a user or of a router (an alias resolving to it)', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const ofBob = await gw.get(`/v1/usage/daily?user=${bob.id}&from=${yesterday}&to=${today}`);
    assert.equal(ofBob.status, 200, JSON.stringify(ofBob.body));
    assert.equal(ofBob.body.user, bob.id);
    assert.equal(ofBob.body.totals.requests, 1);
    const ofRouter = await gw.get(`/v1/usage/daily?router=priced-alias&from=${yesterday}&to=${today}`);
    assert.equal(ofRouter.status, 200, JSON.stringify(ofRouter.body));
    assert.equal(ofRouter.body.router, 'priced');
    assert.equal(ofRouter.body.user, null);
    assert.ok(ofRouter.body.totals.requests >= 3, 'every user of the router counts');
    assert.equal(ofRouter.body.data.length, 2);
    assertError(await gw.get(`/v1/usage/daily?user=${bob.id}&router=priced`), invalid('router'));
  });

  test('daily range checks', async () => {
    assertError(await gw.get('/v1/usage/daily?from=2024-01-10&to=2024-01-01', alice.auth), invalid('to', 'to: must not be before from'));
    assertError(
      await gw.get('/v1/usage/daily?from=2020-01-01&to=2024-01-01', alice.auth),
      invalid('from', 'from: the range may span at most 366 days'),
    );
    assertError(await gw.get('/v1/usage/daily?from=01/02/2024', alice.auth), invalid('from', 'from: must be a date like 2030-01-31'));
  });
});

describe('GET /v1/usage/report', () => {
  test('an admin reads every user and every router with usage over a range, dearest first, as JSON or CSV', async () => {
    const payer = await createUser(gw, { name: 'Payer' });
    const light = await createUser(gw, { name: 'Light' });
    for (let i = 0; i < 2; i++) assert.equal((await chat(gw, 'priced', payer.auth)).status, 200);
    assert.equal((await chat(gw, 'free', light.auth)).status, 200);
    await usageRecords(gw, payer.auth, 2);
    await usageRecords(gw, light.auth, 1);
    const today = new Date().toISOString().slice(0, 10);

    const byUser = await gw.get(`/v1/usage/report?group_by=user&from=${today}&to=${today}`);
    assert.equal(byUser.status, 200, JSON.stringify(byUser.body));
    assert.equal(byUser.body.object, 'usage_report');
    assert.deepEqual([byUser.body.group_by, byUser.body.from, byUser.body.to], ['user', today, today]);
    const rowOf = (id: string) => byUser.body.data.find((row: { user: string }) => row.user === id);
    const mine = await gw.get('/v1/usage', payer.auth);
    assert.equal(rowOf(payer.id).requests, 2);
    assert.equal(rowOf(payer.id).cost, mine.body.totals.cost, "the report's cost is the records' cost");
    assert.equal(rowOf(light.id).cost, 0);
    const costs = byUser.body.data.map((row: { cost: number }) => row.cost);
    assert.deepEqual(
      costs,
      [...costs].sort((a, b) => b - a),
      'dearest first',
    );
    assert.equal(
      byUser.body.totals.requests,
      byUser.body.data.reduce((sum: number, row: { requests: number }) => sum + row.requests, 0),
    );

    const byRouter = await gw.get(`/v1/usage/report?group_by=router&from=${today}&to=${today}`);
    assert.deepEqual(byRouter.body.data.map((row: { router: string }) => row.router).sort(), ['free', 'priced']);

    const csv = await gw.get(`/v1/usage/report?group_by=user&from=${today}&to=${today}&format=csv`);
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv; charset=utf-8/);
    assert.equal(csv.headers.get('content-disposition'), `attachment; filename="usage-by-user-${today}-to-${today}.csv"`);
    const lines = (csv.body as string).trimEnd().split('\r\n');
    assert.equal(lines[0], 'user,requests,prompt_tokens,completion_tokens,total_tokens,cost,charged,uncovered,kwh,kgco2eq');
    assert.equal(lines.length, byUser.body.data.length + 1, 'one line per user');
    const payerLine = lines.find((line) => line.startsWith(`${payer.id},`))!.split(',');
    assert.deepEqual([payerLine[1], payerLine[5]], ['2', String(rowOf(payer.id).cost)]);
  });

  test("a user's report holds only themselves and their keys, never routers; the grouping and the range are checked", async () => {
    const user = await createUser(gw, { name: 'Nosy' });
    assert.equal((await chat(gw, 'free', user.auth)).status, 200);
    const own = await waitUntil(
      () => gw.get('/v1/usage/report?group_by=user', user.auth),
      (a) => a.status !== 200 || a.body.data.length > 0,
    );
    assert.deepEqual(
      own.body.data.map((row: { user: string }) => row.user),
      [user.id],
    );
    const keys = await gw.get('/v1/usage/report?group_by=key', user.auth);
    assert.deepEqual(
      keys.body.data.map((row: { key: string }) => row.key),
      [user.keyId],
    );
    assertError(await gw.get('/v1/usage/report?group_by=router', user.auth), {
      status: 403,
      type: 'permission_error',
      code: 'forbidden',
      message: "Only admins may read usage by router: it counts every team's requests",
      param: 'group_by',
    });
    assertError(await gw.get('/v1/usage/report?group_by=tenant'), invalid('group_by'));
    assertError(await gw.get('/v1/usage/report'), invalid('group_by'));
    assertError(await gw.get('/v1/usage/report?group_by=user&format=xml'), invalid('format'));
    assertError(await gw.get('/v1/usage/report?group_by=user&from=2024-01-10&to=2024-01-01'), invalid('to', 'to: must not be before from'));
  });
});
