// A token that leaves its groups claim out (security review, finding 3). Identity providers omit
// the claim when the scope giving it is not asked for (Dex without `groups`, Keycloak's optional
// client scopes): that says nothing of the person's groups, so the user's own team and role stand,
// and the team's budget still holds them. A present empty list is no groups; a claim that is not a
// list of groups is refused with 401. Tokens are signed by keys served on a real socket, and single
// sign-on goes through a real OpenID provider (oidc-provider, as a process).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { userIdFor } from '../../../gateway/identity/token-identity.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { freePort } from '../../support/free-port.ts';
import { signInIdentity, signInThrough, startOidcProvider, type RunningOidcProvider } from '../../support/oidc-provider.ts';
import { CENT_REQUEST, centModel } from '../../support/priced-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { bearer, startTokenIssuer, type TokenIssuer } from '../../support/token-issuer.ts';

const bed = testBed({ redis: true });
const CONFIG: GatewayConfig = {
  teams: [
    { id: 'red', name: 'Red', budget: '0.03', oidc_groups: ['eng'] },
    { id: 'blue', name: 'Blue', oidc_groups: ['ops'] },
  ],
  models: [centModel()],
};
const ask = CENT_REQUEST;
/** The user made for Ann's identity (`ann` of the issuer `idp`). */
const ANN = userIdFor('idp', 'ann');

let issuer: TokenIssuer;
before(async () => {
  issuer = await startTokenIssuer();
});
after(async () => {
  await issuer?.close();
});

describe('a bearer JWT without its groups claim', () => {
  test("leaves its user in the team their groups gave: the team's spent budget still refuses them (402), and their role stands", async (t) => {
    // As the docs' example: groups mapping to no team give the default team, null.
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: await issuer.identityFile({ unmapped: 'default' }) } });
    const ann = await issuer.token({ sub: 'ann', groups: ['eng'] });
    for (let i = 0; i < 3; i++) assert.equal((await gw.post('/v1/chat/completions', ask, bearer(ann))).status, 200);
    const spent = await gw.post('/v1/chat/completions', ask, bearer(ann));
    assert.equal(spent.status, 402);
    assert.equal(spent.headers.get('x-tollgate-limit-level'), 'team');

    const withoutGroups = await issuer.token({ sub: 'ann' });
    for (let i = 0; i < 3; i++) {
      const refused = await gw.post('/v1/chat/completions', ask, bearer(withoutGroups));
      assert.equal(refused.status, 402, JSON.stringify(refused.body));
      assert.equal(refused.headers.get('x-tollgate-limit-level'), 'team');
    }
    const user = await gw.get(`/v1/admin/users/${ANN}`);
    assert.deepEqual([user.body.team, user.body.role, user.body.spent], ['red', 'user', 0.03]);

    const root = await issuer.token({ sub: 'root', groups: ['platform'] });
    assert.equal((await gw.get('/v1/admin/users', bearer(root))).status, 200);
    assert.equal((await gw.get('/v1/admin/users', bearer(await issuer.token({ sub: 'root' })))).status, 200, 'the admin role stands');

    // A present empty list is "no groups": the default team (none), out of the team's budget.
    const noGroups = await issuer.token({ sub: 'ann', groups: [] });
    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(noGroups))).status, 200);
    assert.equal((await gw.get(`/v1/admin/users/${ANN}`)).body.team, null);
  });

  test('of a person the gateway does not know: placed as no groups would place them, refused with a reason when unmapped groups are', async (t) => {
    const refusing = await bed.gateway(CONFIG, { t, settings: { identityFile: await issuer.identityFile() } });
    const newcomer = await issuer.token({ sub: 'newcomer' });
    const refused = await refusing.post('/v1/chat/completions', ask, bearer(newcomer));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'forbidden');
    assert.match(refused.body.error.message, /does not carry your groups \(claim "groups"\)/);
    assert.equal((await refusing.get(`/v1/admin/users/${userIdFor('idp', 'newcomer')}`)).status, 404, 'no user was made');

    const defaulting = await bed.gateway(CONFIG, {
      t,
      settings: { identityFile: await issuer.identityFile({ unmapped: 'default', default_team: 'blue' }) },
    });
    const other = await issuer.token({ sub: 'other-newcomer' });
    assert.equal((await defaulting.post('/v1/chat/completions', ask, bearer(other))).status, 200);
    assert.equal((await defaulting.get(`/v1/admin/users/${userIdFor('idp', 'other-newcomer')}`)).body.team, 'blue');
  });

  test('a groups claim that is not a list of groups is refused with 401 invalid_token saying so, and makes no user', async (t) => {
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: await issuer.identityFile({ unmapped: 'default' }) } });
    const cases: [string, unknown][] = [
      ['a number', 42],
      ['an object', { eng: true }],
      ['a list holding a number', ['eng', 7]],
      ['null', null],
      ['true', true],
    ];
    for (const [what, groups] of cases) {
      const answer = await gw.post('/v1/chat/completions', ask, bearer(await issuer.token({ sub: 'mallory', groups })));
      assert.equal(answer.status, 401, what);
      assert.equal(answer.body.error.code, 'invalid_token', what);
      assert.match(answer.body.error.message, /groups claim "groups" is not a list of groups/, what);
    }
    const anthropic = await gw.post(
      '/v1/messages',
      { model: 'priced', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      { authorization: '', 'x-api-key': await issuer.token({ sub: 'mallory', groups: 42 }) },
    );
    assert.equal(anthropic.status, 401);
    assert.equal(anthropic.body.error.type, 'authentication_error');
    assert.equal((await gw.get(`/v1/admin/users/${userIdFor('idp', 'mallory')}`)).status, 404);
    assert.match((await gw.get('/metrics')).body as string, /^tollgate_token_refusals_total\{reason="bad_groups"\} 6$/m);
  });
});

describe('single sign-on without the scope that gives the groups claim', () => {
  const CLIENT_SECRET = 'tollgate-groups-claim-secret-52e1';
  let provider: RunningOidcProvider;
  let ports: number[];
  let dir: string;
  before(async () => {
    ports = [await freePort(), await freePort()];
    provider = await startOidcProvider({
      clients: [
        {
          client_id: 'tollgate',
          client_secret: CLIENT_SECRET,
          redirect_uris: ports.map((port) => `http://127.0.0.1:${port}/auth/callback`),
        },
      ],
      users: {
        ann: { name: 'Ann Example', email: 'ann@example.com', groups: ['eng'] },
        bob: { name: 'Bob Example', email: 'bob@example.com', groups: ['eng'] },
      },
    });
    dir = await mkdtemp(join(tmpdir(), 'tollgate-groups-claim-'));
  });
  after(async () => {
    await provider?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('signs a known person in to their own team and role; a person not known yet is refused, told their groups were not given', async (t) => {
    const gatewayAt = async (port: number, scopes: string[]) => {
      const file = join(dir, `identity-${port}.yaml`);
      await writeFile(file, JSON.stringify(signInIdentity(provider, `http://127.0.0.1:${port}/auth/callback`, { scopes })));
      return bed.gateway(CONFIG, { t, settings: { port, identityFile: file, oidcClientSecret: CLIENT_SECRET } });
    };
    // Two gateways on one store: one asks for the groups scope, the other does not.
    const withGroups = await gatewayAt(ports[0]!, ['openid', 'profile', 'email', 'groups']);
    const withoutGroups = await gatewayAt(ports[1]!, ['openid', 'profile', 'email']);
    assert.equal((await signInThrough(withGroups.url, 'ann')).answer.status, 302);
    assert.equal((await withGroups.get(`/v1/admin/users/${ANN}`)).body.team, 'red');

    const again = await signInThrough(withoutGroups.url, 'ann');
    assert.equal(again.answer.status, 302, await again.answer.text());
    const session = again.gateway.get('tollgate_session')!;
    const me = await withoutGroups.get('/v1/me', { authorization: '', cookie: `tollgate_session=${session}` });
    assert.deepEqual([me.body.id, me.body.team, me.body.role], [ANN, 'red', 'user']);

    const bob = await signInThrough(withoutGroups.url, 'bob');
    assert.equal(bob.answer.status, 403);
    assert.match(await bob.answer.text(), /does not carry your groups/);
    assert.equal((await withoutGroups.get(`/v1/admin/users/${userIdFor('idp', 'bob')}`)).status, 404);
  });
});
