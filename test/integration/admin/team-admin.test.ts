// What a team admin may do, route by route: manage their own team's users and keys, within the
// team's budget, and read their team's usage; another team's user is, to them, a user that does
// not exist (404), and every other step outside the team (another team, a raised team budget, an
// admin role, the routing catalogue) is refused with 403. Within the team they may only narrow
// what an admin set for a user (routers, priority, a hard budget, rate limits), never widen it.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { ADMIN_REQUIRED, assertError, bearer, chat, conflict, createUser, notFound, type ExpectedError, type TestUser } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

let gw: TestGateway;
let teamAdmin: TestUser;
let member: TestUser;
let outsider: TestUser;
let plain: TestUser;
let amberLead: TestUser;
let redBoss: TestUser;

const FORBIDDEN: ExpectedError = { status: 403, code: 'forbidden', type: 'permission_error' };

before(async () => {
  gw = await bed.gateway({
    teams: [
      { id: 'red', name: 'Red', budget: '100' },
      { id: 'blue', name: 'Blue' },
      { id: 'amber', name: 'Amber', priority: 2, allowed_routers: ['priced', 'limited'] },
    ],
    models: [
      {
        id: 'priced',
        type: 'text-generation',
        costs: { prompt_tokens: 0, completion_tokens: 1000 },
        providers: [{ model: 'sim', type: 'simulator' }],
      },
      { id: 'limited', type: 'text-generation', rate_limits: { requests_per_minute: 3 }, providers: [{ model: 'sim', type: 'simulator' }] },
      { id: 'spare', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] },
    ],
  });
  teamAdmin = await createUser(gw, { id: 'red-lead', name: 'Red lead', role: 'team_admin', team: 'red' });
  member = await createUser(gw, { id: 'red-dev', name: 'Red dev', team: 'red', budget: 40 });
  outsider = await createUser(gw, { id: 'blue-dev', name: 'Blue dev', team: 'blue' });
  plain = await createUser(gw, { id: 'loner', name: 'Loner' });
  amberLead = await createUser(gw, { id: 'amber-lead', name: 'Amber lead', role: 'team_admin', team: 'amber' });
  for (const user of [member, outsider]) assert.equal((await chat(gw, 'priced', user.auth)).status, 200);
});

const as = () => teamAdmin.auth;

describe('a team admin may', () => {
  test("list and read their team's users, and only theirs", async () => {
    const list = await gw.get('/v1/admin/users', as());
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(list.body.data.map((u: { id: string }) => u.id).sort(), ['red-dev', 'red-lead']);
    const one = await gw.get('/v1/admin/users/red-dev', as());
    assert.equal(one.status, 200);
    assert.equal(one.body.team, 'red');
  });

  test('create a user, who joins their team; set and change budgets within the team budget; delete them', async () => {
    const created = await gw.post('/v1/admin/users', { id: 'red-new', name: 'New', budget: 50 }, as());
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.team, 'red');
    const changed = await gw.patch('/v1/admin/users/red-new', { budget: 100, role: 'team_admin' }, as());
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal(changed.body.budget, 100);
    assert.equal((await gw.delete('/v1/admin/users/red-new', as())).status, 200);
  });

  test("make, narrow, list and revoke their team's users' keys", async () => {
    const key = await gw.post('/v1/admin/users/red-dev/keys', { name: 'ci', budget: 2, allowed_routers: ['priced'] }, as());
    assert.equal(key.status, 201, JSON.stringify(key.body));
    assert.equal(key.body.budget, 2);
    const narrowed = await gw.patch(`/v1/admin/users/red-dev/keys/${key.body.id}`, { budget: 1 }, as());
    assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
    assert.equal(narrowed.body.budget, 1);
    assert.equal(narrowed.body.spend.remaining, 1);
    const listed = await gw.get('/v1/admin/users/red-dev/keys', as());
    assert.ok(listed.body.data.some((k: { id: string }) => k.id === key.body.id));
    assert.equal((await gw.delete(`/v1/admin/users/red-dev/keys/${key.body.id}`, as())).status, 200);
  });

  test('read their own team, with its spending and members', async () => {
    const list = await gw.get('/v1/admin/teams', as());
    assert.deepEqual(
      list.body.data.map((t: { id: string }) => t.id),
      ['red'],
    );
    const team = await gw.get('/v1/admin/teams/red', as());
    assert.equal(team.status, 200);
    assert.equal(team.body.budget, 100);
    assert.ok(team.body.spent > 0, "the member's request is charged to the team");
    assert.deepEqual(team.body.members.sort(), ['red-dev', 'red-lead']);
    assert.deepEqual(team.body.keys.map((k: { user_id: string }) => k.user_id).sort(), ['red-dev', 'red-lead'], "its users' keys in use");
  });

  test("read their team's usage, by user and by team, and a member's records", async () => {
    const records = await gw.get('/v1/usage?user=red-dev', as());
    assert.equal(records.status, 200, JSON.stringify(records.body));
    const byUser = await gw.get('/v1/usage/report?group_by=user', as());
    assert.equal(byUser.status, 200, JSON.stringify(byUser.body));
    assert.deepEqual(
      byUser.body.data.map((row: { user: string }) => row.user),
      ['red-dev'],
    );
    const byTeam = await gw.get('/v1/usage?group_by=team', as());
    assert.deepEqual(
      byTeam.body.data.map((row: { team: string }) => row.team),
      ['red'],
    );
    const daily = await fetch(`${gw.url}/v1/usage/daily?group_by=user&format=csv`, { headers: as() });
    assert.equal(daily.status, 200);
    assert.match(daily.headers.get('content-disposition') ?? '', /usage-daily-by-user-/);
    const lines = (await daily.text()).trimEnd().split('\r\n');
    assert.equal(lines[0], 'user,date,requests,prompt_tokens,completion_tokens,total_tokens,cost,charged,uncovered,kwh,kgco2eq');
    assert.ok(
      lines.slice(1).every((line) => line.startsWith('red-dev,')),
      "only the team's users",
    );
    assert.equal(lines.length - 1, 30, 'one line per day of the default range');
  });
});

describe('a team admin is refused with 403', () => {
  // An admin who sits in the team: a team admin manages neither the user nor its keys.
  before(async () => {
    redBoss = await createUser(gw, { id: 'red-boss', name: 'Red boss', role: 'admin', team: 'red' });
  });
  const cases: { name: string; call: () => ReturnType<TestGateway['get']>; expected?: ExpectedError }[] = [
    { name: 'creating a user in another team', call: () => gw.post('/v1/admin/users', { name: 'Spy', team: 'blue' }, as()) },
    { name: 'creating an admin', call: () => gw.post('/v1/admin/users', { name: 'Boss', role: 'admin' }, as()) },
    { name: 'moving a member to another team', call: () => gw.patch('/v1/admin/users/red-dev', { team: 'blue' }, as()) },
    { name: "a user budget above the team's", call: () => gw.patch('/v1/admin/users/red-dev', { budget: 101 }, as()) },
    { name: "a key budget above the team's", call: () => gw.post('/v1/admin/users/red-lead/keys', { name: 'big', budget: 200 }, as()) },
    { name: 'reading another team', call: () => gw.get('/v1/admin/teams/blue', as()) },
    { name: 'creating a team', call: () => gw.post('/v1/admin/teams', { id: 'green', name: 'Green' }, as()) },
    { name: "raising their own team's budget", call: () => gw.patch('/v1/admin/teams/red', { budget: 1000 }, as()) },
    { name: 'deleting their team', call: () => gw.delete('/v1/admin/teams/red', as()) },
    { name: 'deleting an admin who is in their team', call: () => gw.delete('/v1/admin/users/red-boss', as()) },
    { name: 'revoking the key of an admin in their team', call: () => gw.delete(`/v1/admin/users/red-boss/keys/${redBoss.keyId}`, as()) },
    {
      name: 'narrowing the key of an admin in their team',
      call: () => gw.patch(`/v1/admin/users/red-boss/keys/${redBoss.keyId}`, { budget: 1 }, as()),
    },
    { name: "reading another team's user's usage", call: () => gw.get('/v1/usage?user=blue-dev', as()) },
    { name: 'reading usage by router', call: () => gw.get('/v1/usage/report?group_by=router', as()) },
    { name: "reading another team's daily usage", call: () => gw.get('/v1/usage/daily?team=blue', as()) },
    { name: 'reading the routers', call: () => gw.get('/v1/admin/routers', as()), expected: ADMIN_REQUIRED },
    {
      name: 'adding a router',
      call: () => gw.post('/v1/admin/routers', { name: 'x', type: 'text-generation' }, as()),
      expected: ADMIN_REQUIRED,
    },
    { name: 'reading the providers', call: () => gw.get('/v1/admin/providers', as()), expected: ADMIN_REQUIRED },
    { name: 'reading the routing state', call: () => gw.get('/v1/admin/routing', as()), expected: ADMIN_REQUIRED },
  ];
  for (const { name, call, expected } of cases) {
    test(name, async () => {
      assertError(await call(), expected ?? FORBIDDEN);
    });
  }

  test('and the refused attempts changed nothing', async () => {
    const outside = await gw.get('/v1/admin/users/blue-dev');
    assert.equal(outside.body.team, 'blue');
    assert.equal((await gw.get('/v1/admin/users/red-dev')).body.team, 'red');
    assert.equal((await gw.get('/v1/admin/teams/red')).body.budget, 100);
    assert.equal((await gw.get('/v1/admin/teams/green')).status, 404);
    assert.equal((await gw.get('/v1/admin/routers', redBoss.auth)).status, 200, 'the admin in the team and its key are as they were');
  });
});

describe("to a team admin, another team's user does not exist", () => {
  // Each route is asked about blue-dev (in team blue) and about an id no one has: the two answers
  // must be the same 404 but for the id, so no answer tells a team admin which ids are taken.
  const routes: { name: string; call: (id: string) => ReturnType<TestGateway['get']> }[] = [
    { name: 'reading the user', call: (id) => gw.get(`/v1/admin/users/${id}`, as()) },
    { name: 'changing the user', call: (id) => gw.patch(`/v1/admin/users/${id}`, { budget: 1 }, as()) },
    { name: 'changing the user, id in the body', call: (id) => gw.patch('/v1/admin/users', { id, budget: 1 }, as()) },
    { name: 'deleting the user', call: (id) => gw.delete(`/v1/admin/users/${id}`, as()) },
    { name: "listing the user's keys", call: (id) => gw.get(`/v1/admin/users/${id}/keys`, as()) },
    { name: 'making a key for the user', call: (id) => gw.post(`/v1/admin/users/${id}/keys`, { name: 'x' }, as()) },
    { name: "changing the user's key", call: (id) => gw.patch(`/v1/admin/users/${id}/keys/${outsider.keyId}`, { budget: 1 }, as()) },
    { name: "revoking the user's key", call: (id) => gw.delete(`/v1/admin/users/${id}/keys/${outsider.keyId}`, as()) },
  ];
  for (const { name, call } of routes) {
    test(`${name}: 404, as for an id no one has`, async () => {
      const outside = assertError(await call('blue-dev'), notFound('User "blue-dev" not found', 'id'));
      const nobody = assertError(await call('nobody'), notFound('User "nobody" not found', 'id'));
      assert.deepEqual({ ...outside, message: null }, { ...nobody, message: null });
    });
  }

  test('and blue-dev and their key are untouched', async () => {
    const user = await gw.get('/v1/admin/users/blue-dev');
    assert.equal(user.body.team, 'blue');
    assert.equal(user.body.budget, null);
    const keys = await gw.get('/v1/admin/users/blue-dev/keys');
    assert.deepEqual(
      keys.body.data.map((k: { revoked_at: string | null; budget: number | null }) => [k.revoked_at, k.budget]),
      [[null, null]],
    );
  });

  test("ids a team admin chooses start with their team's id, so creating one never tells whether another team's exists", async () => {
    const lead = amberLead.auth;
    const taken = assertError(await gw.post('/v1/admin/users', { id: 'blue-dev', name: 'Probe' }, lead), {
      ...FORBIDDEN,
      param: 'id',
      message: 'id: a team admin\'s users have ids that start with "amber-"; leave id out to have one generated',
    });
    const free = assertError(await gw.post('/v1/admin/users', { id: 'nobody', name: 'Probe' }, lead), FORBIDDEN);
    assert.deepEqual(taken, free, 'the same answer for a taken id as for a free one');
    // Within their own prefix a taken id is still a conflict: it can only be their own team's.
    assertError(await gw.post('/v1/admin/users', { id: 'amber-lead', name: 'Twin' }, lead), conflict('id'));
    const generated = await gw.post('/v1/admin/users', { name: 'Unnamed' }, lead);
    assert.equal(generated.status, 201, JSON.stringify(generated.body));
    assert.match(generated.body.id, /^u-[0-9a-f]{12}$/);
    assert.equal(generated.body.team, 'amber');
    assert.equal((await gw.delete(`/v1/admin/users/${generated.body.id}`, lead)).status, 200);
    assert.equal((await gw.get('/v1/admin/users/nobody')).status, 404, 'the refused id was not created');
  });
});

describe('a team admin may only narrow what an admin set for a user', () => {
  // Team amber: priority 2, routers priced and limited (3 requests a minute per user); spare is
  // outside the team's list. Each test has users of its own.
  const lead = () => amberLead.auth;
  const create = (body: Record<string, unknown>) => gw.post('/v1/admin/users', { name: 'Member', ...body }, lead());
  const change = (id: string, body: Record<string, unknown>) => gw.patch(`/v1/admin/users/${id}`, body, lead());
  const refused = (field: string, message?: string | RegExp): ExpectedError => ({ ...FORBIDDEN, param: field, message });

  test("priority: at most the team's for a new user, and never above what is in force", async () => {
    assertError(
      await create({ id: 'amber-p1', priority: 3 }),
      refused('priority', "priority: a team admin may only lower a user's priority (in force: 2)"),
    );
    assert.equal((await create({ id: 'amber-p1', priority: 2 })).status, 201);
    assert.equal((await create({ id: 'amber-p2', priority: -1 })).status, 201);
    assertError(await change('amber-p2', { priority: 0 }), refused('priority', /\(in force: -1\)$/));
    // null takes the team's 2: higher too.
    assertError(await change('amber-p2', { priority: null }), refused('priority', /\(in force: -1\)$/));
    assert.equal((await change('amber-p2', { priority: -3 })).status, 200);
    // An admin's higher priority stays, and bounds the team admin, who may still change the rest.
    await createUser(gw, { id: 'amber-vip', name: 'VIP', team: 'amber', priority: 8 });
    assert.equal((await change('amber-vip', { name: 'Very important', budget: 5 })).status, 200);
    assertError(await change('amber-vip', { priority: 10 }), refused('priority', /\(in force: 8\)$/));
    assert.equal((await change('amber-vip', { priority: 7 })).body.priority, 7);
  });

  test('soft_budget: a team admin never makes a budget soft, and may make one hard', async () => {
    assertError(await create({ id: 'amber-s1', budget: 5, soft_budget: true }), refused('soft_budget'));
    assert.equal((await create({ id: 'amber-s1', budget: 5 })).status, 201);
    assertError(await change('amber-s1', { soft_budget: true }), refused('soft_budget'));
    await createUser(gw, { id: 'amber-soft', name: 'Soft', team: 'amber', budget: 5, soft_budget: true });
    assert.equal((await change('amber-soft', { budget: 6 })).status, 200, 'an unchanged soft_budget passes');
    assert.equal((await change('amber-soft', { soft_budget: false })).status, 200);
    assertError(await change('amber-soft', { soft_budget: true }), refused('soft_budget'));
  });

  test("allowed_routers: within the team's for a new user; never a router added, never the list lifted", async () => {
    assertError(
      await create({ id: 'amber-r1', allowed_routers: ['priced', 'spare'] }),
      refused('allowed_routers', /"spare" not among those in force \("priced", "limited"\)$/),
    );
    assert.equal((await create({ id: 'amber-r1', allowed_routers: ['priced'] })).status, 201);
    assert.equal((await create({ id: 'amber-r2' })).status, 201, "no list: the team's");
    await createUser(gw, { id: 'amber-listed', name: 'Listed', team: 'amber', allowed_routers: ['priced', 'limited'] });
    assertError(await change('amber-listed', { allowed_routers: ['priced', 'limited', 'spare'] }), refused('allowed_routers'));
    assertError(await change('amber-listed', { allowed_routers: null }), refused('allowed_routers', /not lift the list/));
    assert.equal((await change('amber-listed', { budget: 3 })).status, 200);
    assert.deepEqual((await change('amber-listed', { allowed_routers: ['limited'] })).body.allowed_routers, ['limited']);
    assertError(await change('amber-listed', { allowed_routers: ['priced', 'limited'] }), refused('allowed_routers'));
  });

  test("rate_limits: none looser than the router's; refused, the router's 3 a minute still hold", async () => {
    const fast = await createUser(gw, { id: 'amber-fast', name: 'Fast', team: 'amber' });
    const message = 'rate_limits.requests_per_minute: a team admin may only narrow a user\'s limits (in force on router "limited": 3)';
    assertError(
      await change('amber-fast', { rate_limits: { requests_per_minute: 10 } }),
      refused('rate_limits.requests_per_minute', message),
    );
    assertError(await change('amber-fast', { rate_limits: { tokens_per_day: 100 } }), refused('rate_limits.requests_per_minute', message));
    assertError(
      await create({ id: 'amber-f2', rate_limits: { requests_per_minute: 10 } }),
      refused('rate_limits.requests_per_minute', message),
    );
    assert.equal((await gw.get('/v1/admin/users/amber-fast')).body.rate_limits, null);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await chat(gw, 'limited', fast.auth)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
  });

  test('rate_limits: narrower ones are taken, and hold', async () => {
    const slow = await createUser(gw, { id: 'amber-slow', name: 'Slow', team: 'amber' });
    const narrowed = await change('amber-slow', { rate_limits: { requests_per_minute: 2 } });
    assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
    assert.deepEqual(narrowed.body.rate_limits, { requests_per_minute: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await chat(gw, 'limited', slow.auth)).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    // Only the routers the user may call count: without limited, the router's 3 are not in force.
    assert.equal((await create({ id: 'amber-f3', allowed_routers: ['priced'], rate_limits: { requests_per_minute: 10 } })).status, 201);
  });

  test("rate_limits an admin set: each kept, none raised, and not traded for the routers' looser ones", async () => {
    await createUser(gw, {
      id: 'amber-capped',
      name: 'Capped',
      team: 'amber',
      rate_limits: { requests_per_minute: 5, tokens_per_day: 1000 },
    });
    assert.equal((await change('amber-capped', { name: 'Still capped' })).status, 200);
    assertError(
      await change('amber-capped', { rate_limits: { requests_per_minute: 6 } }),
      refused('rate_limits.requests_per_minute', /\(in force: 5\)$/),
    );
    assertError(await change('amber-capped', { rate_limits: { tokens_per_day: null } }), refused('rate_limits.tokens_per_day'));
    assertError(
      await change('amber-capped', { rate_limits: null }),
      refused('rate_limits', /for the routers' own, looser on "priced" \(requests_per_minute in force: 5\)$/),
    );
    const lowered = await change('amber-capped', { rate_limits: { requests_per_minute: 1 } });
    assert.deepEqual(lowered.body.rate_limits, { requests_per_minute: 1, tokens_per_day: 1000 });
  });

  test('an admin is bound by none of it', async () => {
    const made = await gw.post('/v1/admin/users', {
      id: 'amber-free',
      name: 'Free',
      team: 'amber',
      priority: 10,
      soft_budget: true,
      allowed_routers: ['spare'],
      rate_limits: { requests_per_minute: 100 },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal((await gw.patch('/v1/admin/users/amber-free', { allowed_routers: null, rate_limits: null })).status, 200);
  });
});

describe('a user', () => {
  test('may not use the admin API at all', async () => {
    assertError(await gw.get('/v1/admin/users', plain.auth), ADMIN_REQUIRED);
    assertError(await gw.get('/v1/admin/teams', member.auth), ADMIN_REQUIRED);
  });

  test('gives their own key a budget narrower than theirs, and sees it on /v1/me', async () => {
    const made = await gw.post('/v1/me/keys', { name: 'app', budget: 1 }, member.auth);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assertError(await gw.patch(`/v1/me/keys/${made.body.id}`, { budget: 50 }, member.auth), {
      status: 400,
      code: 'invalid_request',
      param: 'budget',
    });
    const me = await gw.get('/v1/me', bearer(made.body.key));
    assert.equal(me.body.key.budget, 1);
    assert.equal(me.body.team, 'red');
  });
});
