// What a team admin may do, route by route: manage their own team's users and keys, within the
// team's budget, and read their team's usage; every step outside the team (another team's user,
// another team, a raised team budget, an admin role, the routing catalogue) is refused with 403.
import { before, after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { ADMIN_REQUIRED, assertError, bearer, chat, createUser, type ExpectedError, type TestUser } from './helpers.ts';

let gw: TestGateway;
let teamAdmin: TestUser;
let member: TestUser;
let outsider: TestUser;
let plain: TestUser;

const FORBIDDEN: ExpectedError = { status: 403, code: 'forbidden', type: 'permission_error' };

before(async () => {
  gw = await startTestGateway(`
teams:
  - { id: red, name: Red, budget: "100" }
  - { id: blue, name: Blue }
models:
  - id: priced
    type: text-generation
    costs: { prompt_tokens: 0, completion_tokens: 1000 }
    providers: [{ model: sim, type: simulator }]
`);
  teamAdmin = await createUser(gw, { id: 'red-lead', name: 'Red lead', role: 'team_admin', team: 'red' });
  member = await createUser(gw, { id: 'red-dev', name: 'Red dev', team: 'red', budget: 40 });
  outsider = await createUser(gw, { id: 'blue-dev', name: 'Blue dev', team: 'blue' });
  plain = await createUser(gw, { id: 'loner', name: 'Loner' });
  for (const user of [member, outsider]) assert.equal((await chat(gw, 'priced', user.auth)).status, 200);
});
after(() => gw.close());

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
  const cases: { name: string; call: () => ReturnType<TestGateway['get']>; expected?: ExpectedError }[] = [
    { name: "reading another team's user", call: () => gw.get('/v1/admin/users/blue-dev', as()) },
    { name: "changing another team's user", call: () => gw.patch('/v1/admin/users/blue-dev', { budget: 1 }, as()) },
    { name: "deleting another team's user", call: () => gw.delete('/v1/admin/users/blue-dev', as()) },
    { name: "listing another team's user's keys", call: () => gw.get('/v1/admin/users/blue-dev/keys', as()) },
    { name: "making a key for another team's user", call: () => gw.post('/v1/admin/users/blue-dev/keys', { name: 'x' }, as()) },
    { name: 'creating a user in another team', call: () => gw.post('/v1/admin/users', { name: 'Spy', team: 'blue' }, as()) },
    { name: 'creating an admin', call: () => gw.post('/v1/admin/users', { name: 'Boss', role: 'admin' }, as()) },
    { name: 'moving a member to another team', call: () => gw.patch('/v1/admin/users/red-dev', { team: 'blue' }, as()) },
    { name: "a user budget above the team's", call: () => gw.patch('/v1/admin/users/red-dev', { budget: 101 }, as()) },
    { name: "a key budget above the team's", call: () => gw.post('/v1/admin/users/red-lead/keys', { name: 'big', budget: 200 }, as()) },
    { name: 'reading another team', call: () => gw.get('/v1/admin/teams/blue', as()) },
    { name: 'creating a team', call: () => gw.post('/v1/admin/teams', { id: 'green', name: 'Green' }, as()) },
    { name: "raising their own team's budget", call: () => gw.patch('/v1/admin/teams/red', { budget: 1000 }, as()) },
    { name: 'deleting their team', call: () => gw.delete('/v1/admin/teams/red', as()) },
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
