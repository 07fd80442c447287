// Bearer JWTs on /v1 (issue 32): a caller sends a token of a configured issuer instead of an API
// key, and is the user its identity names (found by `subjects`, or made at the first token), in
// the team and role its groups give. Budgets, limits and allowed routers apply exactly as to a
// key's; refused tokens get 401 `invalid_token` saying why, in the caller's API's envelope; an
// issuer whose keys cannot be read gets 503. The issuer's keys are served on a real socket.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT, type JWTPayload } from 'jose';
import type { IdentityConfigInput } from '../../../gateway/identity/identity-config.ts';
import { userIdFor } from '../../../gateway/identity/token-identity.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { signingKey, signToken, startFakeJwks, type FakeJwks, type SigningKey } from '../../support/fake-jwks.ts';
import { failedStart } from '../../support/gateway-process.ts';
import { CENT_REQUEST, centModel } from '../../support/priced-config.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed({ redis: true });
const AUDIENCE = 'tollgate';

let jwks: FakeJwks;
let key: SigningKey;
let dir: string;

before(async () => {
  key = await signingKey('key-1');
  jwks = await startFakeJwks([key]);
  dir = await mkdtemp(join(tmpdir(), 'tollgate-identity-'));
});
after(async () => {
  await jwks?.close();
  await rm(dir, { recursive: true, force: true });
});

/** An identity file trusting the fake issuer (keys found by discovery), with `more` over it. */
async function identityFile(more: Partial<IdentityConfigInput> = {}, issuer: Record<string, unknown> = {}): Promise<string> {
  const file = join(dir, `identity-${Math.random().toString(36).slice(2)}.yaml`);
  const config = {
    issuers: [{ name: 'idp', issuer: jwks.issuer, audiences: [AUDIENCE], algorithms: ['RS256'], groups_claim: 'groups', ...issuer }],
    admin_groups: ['platform'],
    unmapped: 'refuse',
    ...more,
  };
  await writeFile(file, JSON.stringify(config)); // JSON is YAML
  return file;
}

const CONFIG: GatewayConfig = {
  teams: [
    { id: 'red', name: 'Red', budget: '0.03', oidc_groups: ['eng'], oidc_admin_groups: ['eng-leads'] },
    { id: 'blue', name: 'Blue', oidc_groups: ['ops'] },
  ],
  users: [{ id: 'summarizer', name: 'Summarizer', budget: '5', subjects: ['system:serviceaccount:apps:summarizer'] }],
  models: [centModel()],
};
const ask = CENT_REQUEST;

const now = () => Math.floor(Date.now() / 1000);
/** A token of the fake issuer for AUDIENCE, valid for ten minutes, with `claims` over it. */
const token = (claims: JWTPayload) =>
  signToken(key, { iss: jwks.issuer, aud: AUDIENCE, iat: now(), nbf: now(), exp: now() + 600, ...claims });
const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

describe('a bearer JWT of a configured issuer', () => {
  test("a person's first token makes their user, in the team their groups name; they are charged as any user, to the team's budget", async (t) => {
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: await identityFile() } });
    const ann = await token({ sub: 'ann@example.com', name: 'Ann Example', groups: ['eng', 'somewhere-else'] });
    const served = await gw.post('/v1/chat/completions', ask, bearer(ann));
    assert.equal(served.status, 200, JSON.stringify(served.body));
    assert.equal(served.body.usage.cost, 0.01);

    const users = await gw.get('/v1/admin/users');
    const made = users.body.data.find((user: { subjects: string[] | null }) => user.subjects?.includes('idp#ann@example.com'));
    assert.ok(made, 'a user listing the identity, scoped by its issuer, was made');
    assert.match(made.id, /^idp-ann-example-com-[0-9a-f]{8}$/);
    assert.deepEqual([made.name, made.team, made.role, made.spent], ['Ann Example', 'red', 'user', 0.01]);

    // The team's budget (0.03) holds three requests, whoever of the team makes them.
    const ben = await token({ sub: 'ben', groups: ['eng'] });
    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(ben))).status, 200);
    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(ann))).status, 200);
    const refused = await gw.post('/v1/chat/completions', ask, bearer(ben));
    assert.equal(refused.status, 402);
    assert.equal(refused.headers.get('x-tollgate-limit-level'), 'team');

    // What /v1/me says of a token's caller: the user, and how they authenticated.
    const me = await gw.get('/v1/me', bearer(ben));
    assert.equal(me.status, 200);
    assert.deepEqual([me.body.id, me.body.team, me.body.key.id], [userIdFor('idp', 'ben'), 'red', 'jwt-idp']);
  });

  test("groups give roles: the admin group an admin, a team's admin group that team's team admin; a change of groups moves the user", async (t) => {
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: await identityFile() } });
    const lead = await token({ sub: 'lead', groups: ['eng-leads'] });
    const teamUsers = await gw.get('/v1/admin/users', bearer(lead));
    assert.equal(teamUsers.status, 200, JSON.stringify(teamUsers.body));
    const listed = teamUsers.body.data as { id: string; team: string }[];
    assert.ok(listed.some((user) => user.id === userIdFor('idp', 'lead')));
    assert.deepEqual([...new Set(listed.map((user) => user.team))], ['red'], "a team admin sees their team's users only");
    assert.equal((await gw.get('/v1/admin/teams', bearer(lead))).body.data.length, 1);
    assert.equal((await gw.post('/v1/admin/teams', { id: 'green', name: 'Green' }, bearer(lead))).status, 403);

    const root = await token({ sub: 'root', groups: ['platform'] });
    assert.equal((await gw.post('/v1/admin/teams', { id: 'green', name: 'Green' }, bearer(root))).status, 201);

    const moved = await token({ sub: 'lead', groups: ['ops'] });
    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(moved))).status, 200);
    const user = await gw.get(`/v1/admin/users/${userIdFor('idp', 'lead')}`);
    assert.deepEqual([user.body.team, user.body.role], ['blue', 'user']);
    assert.equal((await gw.get('/v1/admin/users', bearer(moved))).status, 403, 'no longer a team admin');
  });

  test("a user listing the identity in subjects is the caller, charged as the user; the token's issuer is its key in usage", async (t) => {
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: await identityFile({ unmapped: 'default' }) } });
    const app = await token({ sub: 'system:serviceaccount:apps:summarizer' });
    const served = await gw.post('/v1/chat/completions', ask, bearer(app));
    assert.equal(served.status, 200, JSON.stringify(served.body));
    const user = await gw.get('/v1/admin/users/summarizer');
    assert.equal(user.body.spent, 0.01);
    const usage = await gw.get('/v1/usage?user=summarizer');
    assert.deepEqual(
      usage.body.data.map((record: { user: string; key_id: string }) => [record.user, record.key_id]),
      [['summarizer', 'jwt-idp']],
    );
  });

  test('a token whose groups map to no team is refused with 403 saying so, or given the default team and role', async (t) => {
    const refusing = await bed.gateway(CONFIG, { t, settings: { identityFile: await identityFile() } });
    const stranger = await token({ sub: 'stranger', groups: ['visitors'] });
    const refused = await refusing.post('/v1/chat/completions', ask, bearer(stranger));
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /None of your groups gives you a team on this gateway/);
    assert.equal((await refusing.get(`/v1/admin/users/${userIdFor('idp', 'stranger')}`)).status, 404, 'no user was made');

    const defaulting = await bed.gateway(CONFIG, {
      t,
      settings: { identityFile: await identityFile({ unmapped: 'default', default_team: 'blue' }) },
    });
    assert.equal((await defaulting.post('/v1/chat/completions', ask, bearer(stranger))).status, 200);
    assert.deepEqual(((await defaulting.get(`/v1/admin/users/${userIdFor('idp', 'stranger')}`)).body as { team: string }).team, 'blue');
  });

  test('with create_users false, an identity no user lists is refused', async (t) => {
    const gw = await bed.gateway(CONFIG, {
      t,
      settings: { identityFile: await identityFile({ create_users: false, unmapped: 'default' }) },
    });
    const unknown = await gw.post('/v1/chat/completions', ask, bearer(await token({ sub: 'nobody' })));
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.error.code, 'invalid_token');
    assert.match(unknown.body.error.message, /no user of this gateway lists its identity/);
    const known = await gw.post('/v1/chat/completions', ask, bearer(await token({ sub: 'system:serviceaccount:apps:summarizer' })));
    assert.equal(known.status, 200);
  });

  test('refused tokens get 401 invalid_token saying why: expired, no exp, not yet valid, another audience, an unknown issuer, alg none, HS256 with the public key', async (t) => {
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: await identityFile({ unmapped: 'default' }) } });
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ iss: jwks.issuer, aud: AUDIENCE, sub: 'mallory', exp: now() + 600 }),
    ).toString('base64url')}.`;
    const hs256 = await new SignJWT({ iss: jwks.issuer, aud: AUDIENCE, sub: 'mallory', exp: now() + 600 })
      .setProtectedHeader({ alg: 'HS256', kid: key.kid })
      .sign(new TextEncoder().encode(key.publicPem));
    const cases: [string, string, RegExp][] = [
      ['expired', await token({ sub: 'ann', exp: now() - 3600 }), /it has expired/],
      ['without exp', await token({ sub: 'ann', exp: undefined }), /^Invalid bearer token: it has no expiry \(exp\)/],
      ['not yet valid', await token({ sub: 'ann', nbf: now() + 3600 }), /it is not valid yet/],
      ['another audience', await token({ sub: 'ann', aud: 'someone-else' }), /not meant for this gateway/],
      ['an unknown issuer', await token({ sub: 'ann', iss: 'https://elsewhere.example' }), /not one this gateway trusts/],
      ['alg none', unsigned, /not one this gateway trusts|not a valid JWT|algorithm/],
      ['HS256 with the public key as secret', hs256, /algorithm this gateway does not accept/],
    ];
    for (const [what, presented, reason] of cases) {
      const answer = await gw.post('/v1/chat/completions', ask, bearer(presented));
      assert.equal(answer.status, 401, what);
      assert.equal(answer.body.error.code, 'invalid_token', what);
      assert.match(answer.body.error.message, reason, what);
    }
    assert.equal((await gw.get(`/v1/admin/users/${userIdFor('idp', 'mallory')}`)).status, 404);
    const metrics = (await gw.get('/metrics')).body as string;
    // Each refusal counted by why (`alg: none` counts as an algorithm not accepted, or an unknown issuer).
    for (const reason of ['expired', 'no_expiry', 'not_yet_valid', 'wrong_audience', 'algorithm_not_allowed'])
      assert.match(metrics, new RegExp(`^tollgate_token_refusals_total\\{reason="${reason}"\\} [12]$`, 'm'), reason);
  });

  test("on /v1/messages a token is sent as Anthropic's clients send it (x-api-key, or Authorization), and refused in Anthropic's envelope", async (t) => {
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: await identityFile({ unmapped: 'default' }) } });
    const message = { model: 'priced', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    const claude = await token({ sub: 'claude-user' });
    const byApiKey = await gw.post('/v1/messages', message, { authorization: '', 'x-api-key': claude });
    assert.equal(byApiKey.status, 200, JSON.stringify(byApiKey.body));
    assert.equal(byApiKey.body.type, 'message');
    assert.equal((await gw.post('/v1/messages', message, bearer(claude))).status, 200);
    const expired = await gw.post('/v1/messages', message, {
      authorization: '',
      'x-api-key': await token({ sub: 'claude-user', exp: now() - 3600 }),
    });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.type, 'error');
    assert.equal(expired.body.error.type, 'authentication_error');
    assert.match(expired.body.error.message, /it has expired/);
  });

  test("an issuer whose keys were never read and cannot be: 503 identity_unavailable, answered within the fetch's timeout", async (t) => {
    const gw = await bed.gateway(CONFIG, {
      t,
      settings: { identityFile: await identityFile({ unmapped: 'default', jwks_timeout_ms: 300 }, { jwks_url: jwks.url }) },
    });
    jwks.behave('hang');
    t.after(() => jwks.behave('serve'));
    const answer = await gw.post('/v1/chat/completions', ask, bearer(await token({ sub: 'ann' })));
    assert.equal(answer.status, 503);
    assert.equal(answer.body.error.code, 'identity_unavailable');
    assert.equal(answer.headers.get('retry-after'), '1');
  });

  test('an issuer whose JWKS is past the size bound: 503 identity_unavailable, its keys fetched once for many tokens rather than at each', async (t) => {
    const oversized = await startFakeJwks([key]);
    t.after(() => oversized.close());
    oversized.flood(64 * 1024 * 1024, { declared: true });
    const gw = await bed.gateway(CONFIG, {
      t,
      settings: { identityFile: await identityFile({ unmapped: 'default' }, { issuer: oversized.issuer, jwks_url: oversized.url }) },
    });
    const presented = await signToken(key, { iss: oversized.issuer, aud: AUDIENCE, sub: 'ann', exp: now() + 600 });
    const tokens = 20;
    for (let i = 0; i < tokens; i++) {
      const answer = await gw.post('/v1/chat/completions', ask, bearer(presented));
      assert.equal(answer.status, 503);
      assert.equal(answer.body.error.code, 'identity_unavailable');
    }
    // Fetched again only after a backoff doubling from 1 s: twenty tokens would have to take 31 s
    // to make five fetches.
    assert.ok(oversized.fetches < tokens / 4, `${oversized.fetches} fetches for ${tokens} tokens`);
  });

  test('two gateways on one store: the same new person at both at once is one user, and each serves them', async (t) => {
    const file = await identityFile({ unmapped: 'default' });
    const [one, two] = await bed.gateways(2, CONFIG, { t, settings: { identityFile: file } });
    const cy = await token({ sub: 'cy@example.com', groups: ['ops'] });
    const answers = await Promise.all([one!, two!, one!, two!].map((gw) => gw.post('/v1/chat/completions', ask, bearer(cy))));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200, 200],
    );
    const users = (await one!.get('/v1/admin/users')).body.data.filter((user: { subjects: string[] | null }) =>
      user.subjects?.includes('idp#cy@example.com'),
    );
    assert.equal(users.length, 1);
    assert.equal(users[0].spent, 0.04);
  });

  test('nothing of a token appears in the logs, the metrics, usage records or any answer', async (t) => {
    const file = await identityFile({ unmapped: 'default' });
    const gw = await bed.process(CONFIG, { t, args: ['--identity-file', file, '--log-level', 'debug'] });
    const admin = await token({ sub: 'auditor', groups: ['platform'] });
    const expired = await token({ sub: 'auditor', groups: ['platform'], exp: now() - 3600 });
    const seen: string[] = [];
    const call = async (path: string, presented: string, body?: object) => {
      const response = await fetch(gw.url + path, {
        method: body ? 'POST' : 'GET',
        headers: { ...bearer(presented), ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      seen.push(await response.text());
      return response.status;
    };
    assert.equal(await call('/v1/chat/completions', admin, ask), 200);
    assert.equal(await call('/v1/chat/completions', expired, ask), 401);
    assert.equal(await call('/v1/me', admin), 200);
    assert.equal(await call('/v1/admin/users', admin), 200);
    assert.equal(await call('/v1/usage', admin), 200);
    seen.push(await (await fetch(`${gw.url}/metrics`)).text());
    seen.push(gw.output.join('\n'));
    assert.ok(
      gw.output.some((line) => line.includes('made for a token of idp')),
      'the gateway logged the user it made',
    );
    for (const presented of [admin, expired]) {
      const signature = presented.slice(presented.lastIndexOf('.') + 1);
      for (const text of seen) assert.ok(!text.includes(signature), `a token's signature appeared in: ${text.slice(0, 300)}`);
    }
  });

  test('an identity file with a mistake stops the gateway at start-up, naming where and why', async () => {
    const file = join(dir, 'wrong.yaml');
    await writeFile(
      file,
      'issuers:\n  - name: idp\n    issuer: https://idp.example\n    audiences: []\n    algorithms: [HS256]\nunmapped: sometimes\n',
    );
    const { code, stderr } = await failedStart(['gateway', '--identity-file', file]);
    assert.notEqual(code, 0);
    assert.match(stderr, /--identity-file .*wrong\.yaml/);
    assert.match(stderr, /issuers\[0\]\.audiences/);
    assert.match(stderr, /issuers\[0\]\.algorithms\[0\]/);
    assert.match(stderr, /unmapped/);
  });
});
