// Single sign-on with OpenID Connect (issue 32), against a real OpenID provider run as a process
// (oidc-provider), signed in through its pages as a browser would (test/e2e drives them in
// Chromium): the authorization code flow with PKCE, state and nonce; a session kept in Redis and
// seen by every gateway; its user, team and role from the person's groups; sign-out, after which
// the session cookie is refused everywhere; a person whose groups map to nothing refused with a
// page saying so; and key sign-in turned off for the admin API.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { userIdFor } from '../../../gateway/identity/token-identity.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { freePort } from '../../support/free-port.ts';
import { signInIdentity, signInThrough, startOidcProvider, type RunningOidcProvider } from '../../support/oidc-provider.ts';
import { CENT_REQUEST, centModel } from '../../support/priced-config.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed({ redis: true });
const CLIENT_SECRET = 'tollgate-client-secret-3f9a1c';
const USERS = {
  ann: { name: 'Ann Example', email: 'ann@example.com', groups: ['eng'] },
  root: { name: 'Root Admin', email: 'root@example.com', groups: ['platform'] },
  stranger: { name: 'Stranger', email: 'stranger@example.com', groups: ['visitors'] },
};
const CONFIG: GatewayConfig = {
  teams: [{ id: 'red', name: 'Red', budget: '0.02', oidc_groups: ['eng'] }],
  models: [centModel()],
};
const ask = CENT_REQUEST;

let provider: RunningOidcProvider;
let dir: string;
/** Ports the gateways listen on, each registered as a redirect URI of the client. */
let ports: number[];

before(async () => {
  ports = [await freePort(), await freePort(), await freePort()];
  provider = await startOidcProvider({
    clients: [
      {
        client_id: 'tollgate',
        client_secret: CLIENT_SECRET,
        redirect_uris: ports.map((port) => `http://127.0.0.1:${port}/auth/callback`),
      },
    ],
    users: USERS,
  });
  dir = await mkdtemp(join(tmpdir(), 'tollgate-sso-'));
});
after(async () => {
  await provider?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** An identity file signing people in with the provider, answering at the gateway on `port`. */
async function identityFile(port: number, signIn: Record<string, unknown> = {}): Promise<string> {
  const file = join(dir, `identity-${port}-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, JSON.stringify(signInIdentity(provider, `http://127.0.0.1:${port}/auth/callback`, signIn)));
  return file;
}

const gatewayAt = async (port: number, t: TestContext, signIn = {}) =>
  bed.gateway(CONFIG, { t, settings: { port, identityFile: await identityFile(port, signIn), oidcClientSecret: CLIENT_SECRET } });

/** Headers of a browser request with the session cookie, from a page of the gateway at `url`. */
const asBrowser = (url: string, cookie: string) => ({ authorization: '', cookie: `tollgate_session=${cookie}`, origin: url });

describe('single sign-on', () => {
  test('a person signs in, is the user their groups place, is charged within the team budget; a second gateway sees the session; sign-out ends it everywhere', async (t) => {
    const [one, two] = [await gatewayAt(ports[0]!, t), await gatewayAt(ports[1]!, t)];
    assert.deepEqual((await one.get('/auth/options', { authorization: '' })).body, {
      single_sign_on: { issuer: 'idp', login_url: '/auth/login' },
      key_sign_in: true,
    });
    const { answer, gateway: jar } = await signInThrough(one.url, 'ann');
    assert.equal(answer.status, 302);
    assert.equal(answer.headers.get('location'), '/playground/');
    const setCookie = answer.headers.getSetCookie().find((line) => line.startsWith('tollgate_session='))!;
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /Secure/);
    assert.match(setCookie, /SameSite=Lax/);
    assert.match(setCookie, /Max-Age=43200/);
    const session = jar.get('tollgate_session')!;

    const me = await one.get('/v1/me', asBrowser(one.url, session));
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.deepEqual(
      [me.body.id, me.body.name, me.body.team, me.body.role, me.body.key.id],
      [userIdFor('idp', 'ann'), 'Ann Example', 'red', 'user', 'sso-idp'],
    );

    // Charged as any user: the team's budget (0.02) holds two requests.
    assert.equal((await one.post('/v1/chat/completions', ask, asBrowser(one.url, session))).status, 200);
    assert.equal(
      (await two.post('/v1/chat/completions', ask, asBrowser(two.url, session))).status,
      200,
      'the second gateway knows the session',
    );
    const refused = await one.post('/v1/chat/completions', ask, asBrowser(one.url, session));
    assert.equal(refused.status, 402);
    assert.equal(refused.headers.get('x-tollgate-limit-level'), 'team');
    assert.equal((await one.get('/v1/admin/users', asBrowser(one.url, session))).status, 403, 'a user is not an admin');

    // A request that changes something, with the cookie but from another site's page: refused.
    const crossSite = await one.post('/v1/me/keys', { name: 'stolen' }, { ...asBrowser(one.url, session), origin: 'https://evil.example' });
    assert.equal(crossSite.status, 403);
    const noOrigin = await one.post('/v1/me/keys', { name: 'stolen' }, { authorization: '', cookie: `tollgate_session=${session}` });
    assert.equal(noOrigin.status, 403);

    const out = await fetch(`${two.url}/auth/logout`, { method: 'POST', headers: { cookie: `tollgate_session=${session}` } });
    assert.equal(out.status, 204);
    assert.match(out.headers.getSetCookie().join('\n'), /tollgate_session=; Max-Age=0/);
    for (const gw of [one, two]) {
      const replayed = await gw.get('/v1/me', asBrowser(gw.url, session));
      assert.equal(replayed.status, 401, 'the session cookie replayed after sign-out');
      assert.match(replayed.body.error.message, /session has ended/);
    }
  });

  test('an admin group gives the admin API; a person whose groups map to no team gets a page saying so, and no session', async (t) => {
    const gw = await gatewayAt(ports[2]!, t);
    const root = await signInThrough(gw.url, 'root');
    const session = root.gateway.get('tollgate_session')!;
    const users = await gw.get('/v1/admin/users', asBrowser(gw.url, session));
    assert.equal(users.status, 200);
    assert.ok(users.body.data.some((user: { id: string; role: string }) => user.id === userIdFor('idp', 'root') && user.role === 'admin'));

    const stranger = await signInThrough(gw.url, 'stranger');
    assert.equal(stranger.answer.status, 403);
    assert.match(stranger.answer.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await stranger.answer.text(), /None of your groups gives you a team on this gateway/);
    assert.equal(stranger.gateway.get('tollgate_session'), undefined);
    const metrics = (await gw.get('/metrics')).body as string;
    assert.match(metrics, /^tollgate_sign_ins_total\{outcome="signed_in"\} 1$/m);
    assert.match(metrics, /^tollgate_sign_ins_total\{outcome="refused"\} 1$/m);
  });

  test('a sign-in returns only to a path of the gateway: another site, or a return_to given twice, returns to the Playground', async (t) => {
    const gw = await gatewayAt(ports[2]!, t);
    for (const [query, expected] of [
      ['return_to=%2Fplayground%2F%23usage', '/playground/#usage'],
      ['return_to=https%3A%2F%2Fevil.example%2F', '/playground/'],
      ['return_to=%2F%2Fevil.example%2F', '/playground/'],
      ['return_to=%2Fa&return_to=%2Fb', '/playground/'],
    ] as const) {
      const { answer } = await signInThrough(gw.url, 'ann', `/auth/login?${query}`);
      assert.equal(answer.status, 302, query);
      assert.equal(answer.headers.get('location'), expected, query);
    }
  });

  test("the provider's answer is taken once, and only by the browser that began the sign-in", async (t) => {
    const gw = await gatewayAt(ports[2]!, t);
    // Stop at the callback: replay it, and send it without the sign-in's cookie.
    const { answer } = await signInThrough(gw.url, 'ann');
    assert.equal(answer.status, 302);
    const callback = new URL(answer.url);
    const state = callback.searchParams.get('state')!;
    const again = await fetch(callback, { redirect: 'manual', headers: { cookie: `tollgate_sign_in=${state}` } });
    assert.equal(again.status, 400);
    assert.match(await again.text(), /expired or was already used/);
    const elsewhere = await fetch(callback, { redirect: 'manual' });
    assert.equal(elsewhere.status, 400);
    assert.match(await elsewhere.text(), /not started in this browser/);
  });

  test('with key sign-in off, the admin API refuses API keys and takes sessions; inference still takes keys', async (t) => {
    const gw = await gatewayAt(ports[2]!, t, { key_sign_in: false });
    assert.equal((await gw.get('/auth/options', { authorization: '' })).body.key_sign_in, false);
    const byKey = await gw.get('/v1/admin/users');
    assert.equal(byKey.status, 403);
    assert.match(byKey.body.error.message, /single sign-on only/);
    assert.equal((await gw.post('/v1/chat/completions', { ...ask, model: 'priced' })).status, 200);
    const root = await signInThrough(gw.url, 'root');
    assert.equal((await gw.get('/v1/admin/users', asBrowser(gw.url, root.gateway.get('tollgate_session')!))).status, 200);
  });

  test('nothing of the client secret or a session appears in the logs, the metrics or any answer', async (t) => {
    const port = ports[2]!;
    const gw = await bed.process(CONFIG, {
      t,
      args: [
        '--port',
        String(port),
        '--identity-file',
        await identityFile(port),
        '--log-level',
        'debug',
        '--admin-key',
        generateKey().secret,
      ],
      env: { TOLLGATE_OIDC_CLIENT_SECRET: CLIENT_SECRET },
    });
    const { gateway: jar } = await signInThrough(gw.url, 'root');
    const session = jar.get('tollgate_session')!;
    const seen: string[] = [];
    for (const path of ['/v1/me', '/v1/admin/users', '/v1/usage', '/auth/options', '/metrics'])
      seen.push(await (await fetch(gw.url + path, { headers: { cookie: `tollgate_session=${session}` } })).text());
    seen.push(gw.output.join('\n'));
    assert.ok(gw.output.some((line) => line.includes('signed in with idp')));
    for (const text of seen) {
      assert.ok(!text.includes(CLIENT_SECRET), `the client secret appeared in: ${text.slice(0, 300)}`);
      assert.ok(!text.includes(session), `the session appeared in: ${text.slice(0, 300)}`);
    }
  });
});
