// API keys and callers of tokens or single sign-on (security review, finding 5). A key made by a
// caller whose role and team come from their groups would keep them after the groups change (an
// admin by group, removed from it, stays admin through the key), and a service account's key
// would never expire: so such callers may not make keys for themselves (403, saying why); an
// admin still makes keys for others, and a caller of an API key makes their own. Tokens are signed
// by keys served on a real socket; single sign-on goes through a real OpenID provider (a process).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../../support/api-errors.ts';
import { userIdFor } from '../../../gateway/identity/token-identity.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { freePort } from '../../support/free-port.ts';
import { signInIdentity, signInThrough, startOidcProvider, type RunningOidcProvider } from '../../support/oidc-provider.ts';
import { centModel } from '../../support/priced-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { bearer, startTokenIssuer, type TokenIssuer } from '../../support/token-issuer.ts';

const bed = testBed({ redis: true });
const CONFIG: GatewayConfig = {
  teams: [{ id: 'red', name: 'Red', budget: '5', oidc_groups: ['eng'] }],
  users: [{ id: 'summarizer', name: 'Summarizer', budget: '5', subjects: ['idp#system:serviceaccount:apps:summarizer'] }],
  models: [centModel()],
};
/** The users made for Ann's and Root's identities (of the issuer `idp`, by token and by sign-in alike). */
const [ANN, ROOT] = [userIdFor('idp', 'ann'), userIdFor('idp', 'root')];
const REFUSED = { status: 403, code: 'forbidden', message: /^API keys are made with an API key, not with a token or single sign-on/ };

let issuer: TokenIssuer;
before(async () => {
  issuer = await startTokenIssuer();
});
after(async () => {
  await issuer?.close();
});

describe('a caller of a bearer JWT', () => {
  test('may not make an API key for themselves: POST /v1/me/keys and the admin route for their own user are 403, and no key is made', async (t) => {
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: await issuer.identityFile({ unmapped: 'default' }) } });
    const root = await issuer.token({ sub: 'root', groups: ['platform'] });
    const ann = await issuer.token({ sub: 'ann', groups: ['eng'] });
    const app = await issuer.token({ sub: 'system:serviceaccount:apps:summarizer' });
    for (const token of [root, ann, app]) assertError(await gw.post('/v1/me/keys', { name: 'laptop' }, bearer(token)), REFUSED);
    assertError(await gw.post(`/v1/admin/users/${ROOT}/keys`, { name: 'laptop' }, bearer(root)), REFUSED);

    for (const user of [ROOT, ANN, 'summarizer'])
      assert.deepEqual((await gw.get(`/v1/admin/users/${user}/keys`)).body.data, [], `${user} holds no key`);
    // Taken out of the admin group, root is no admin: no key of theirs says otherwise.
    assert.equal((await gw.get('/v1/admin/users', bearer(await issuer.token({ sub: 'root', groups: [] })))).status, 403);

    // An admin by group still makes keys for others; a caller of an API key makes their own.
    const admin = await issuer.token({ sub: 'second-admin', groups: ['platform'] });
    assert.equal((await gw.post(`/v1/admin/users/${ANN}/keys`, { name: 'ci' }, bearer(admin))).status, 201);
    const made = await gw.post('/v1/admin/users/summarizer/keys', { name: 'batch' });
    assert.equal(made.status, 201);
    const own = await gw.post('/v1/me/keys', { name: 'second' }, bearer(made.body.key));
    assert.equal(own.status, 201, JSON.stringify(own.body));
  });
});

describe('a person signed in with single sign-on', () => {
  const CLIENT_SECRET = 'tollgate-token-keys-secret-0b7d';
  let provider: RunningOidcProvider;
  let port: number;
  let dir: string;
  before(async () => {
    port = await freePort();
    provider = await startOidcProvider({
      clients: [{ client_id: 'tollgate', client_secret: CLIENT_SECRET, redirect_uris: [`http://127.0.0.1:${port}/auth/callback`] }],
      users: {
        ann: { name: 'Ann Example', email: 'ann@example.com', groups: ['eng'] },
        root: { name: 'Root Admin', email: 'root@example.com', groups: ['platform'] },
      },
    });
    dir = await mkdtemp(join(tmpdir(), 'tollgate-token-keys-'));
  });
  after(async () => {
    await provider?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('may not make an API key for themselves either, and the refusal says why', async (t) => {
    const file = join(dir, 'identity.yaml');
    await writeFile(file, JSON.stringify(signInIdentity(provider, `http://127.0.0.1:${port}/auth/callback`)));
    const gw = await bed.gateway(CONFIG, { t, settings: { port, identityFile: file, oidcClientSecret: CLIENT_SECRET } });
    const asBrowser = (session: string) => ({ authorization: '', cookie: `tollgate_session=${session}`, origin: gw.url });

    const ann = (await signInThrough(gw.url, 'ann')).gateway.get('tollgate_session')!;
    assertError(await gw.post('/v1/me/keys', { name: 'laptop' }, asBrowser(ann)), REFUSED);
    const root = (await signInThrough(gw.url, 'root')).gateway.get('tollgate_session')!;
    assertError(await gw.post('/v1/me/keys', { name: 'laptop' }, asBrowser(root)), REFUSED);
    assertError(await gw.post(`/v1/admin/users/${ROOT}/keys`, { name: 'laptop' }, asBrowser(root)), REFUSED);
    assert.equal(
      (await gw.post(`/v1/admin/users/${ANN}/keys`, { name: 'ci' }, asBrowser(root))).status,
      201,
      'an admin makes keys for others',
    );
    assert.deepEqual((await gw.get(`/v1/admin/users/${ROOT}/keys`)).body.data, []);
  });
});
