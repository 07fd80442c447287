// Which user a token's identity is, when users list identities in `subjects` (issue 46): only an
// admin writes subjects, so a team admin cannot point another person's identity at a user whose
// key they hold; subjects are scoped by issuer (`<issuer>#<subject>`), so one issuer's token is
// never a user listing another issuer's identity, and the ids made for new users name the issuer;
// a user made through the admin API is the person's at their very next token, on every gateway,
// however long the gateways have run. Tokens come from issuers whose keys are served on a real
// socket; the two-gateway case runs on a real Redis.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { JWTPayload } from 'jose';
import type { IdentityConfigInput } from '../../../gateway/identity/identity-config.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError } from '../../support/api-errors.ts';
import { signingKey, signToken, startFakeJwks, type FakeJwks, type SigningKey } from '../../support/fake-jwks.ts';
import { CENT_REQUEST as ask, centModel } from '../../support/priced-config.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed({ redis: true });
const AUDIENCE = 'tollgate';

/** An issuer of the test: its keys on a real socket, and tokens it signs. */
interface Issuer {
  readonly name: string;
  readonly jwks: FakeJwks;
  readonly key: SigningKey;
}

let idp: Issuer;
let other: Issuer;
let dir: string;

before(async () => {
  const start = async (name: string): Promise<Issuer> => {
    const key = await signingKey(`${name}-key`);
    return { name, key, jwks: await startFakeJwks([key]) };
  };
  [idp, other] = await Promise.all([start('idp'), start('other')]);
  dir = await mkdtemp(join(tmpdir(), 'tollgate-subjects-'));
});
after(async () => {
  await Promise.all([idp?.jwks.close(), other?.jwks.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** An identity file trusting `issuers` (groups in `groups`, `platform` the admin group), with `more` over it. */
async function identityFile(issuers: readonly Issuer[], more: Partial<IdentityConfigInput> = {}): Promise<string> {
  const file = join(dir, `identity-${Math.random().toString(36).slice(2)}.yaml`);
  const config = {
    issuers: issuers.map((issuer) => ({
      name: issuer.name,
      issuer: issuer.jwks.issuer,
      audiences: [AUDIENCE],
      algorithms: ['RS256'],
      groups_claim: 'groups',
    })),
    admin_groups: ['platform'],
    unmapped: 'default',
    ...more,
  };
  await writeFile(file, JSON.stringify(config)); // JSON is YAML
  return file;
}

const now = () => Math.floor(Date.now() / 1000);
/** A token of `issuer` for AUDIENCE, valid for ten minutes, with `claims` over it. */
const token = (issuer: Issuer, claims: JWTPayload) =>
  signToken(issuer.key, { iss: issuer.jwks.issuer, aud: AUDIENCE, iat: now(), nbf: now(), exp: now() + 600, ...claims });
const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

const CONFIG: GatewayConfig = {
  teams: [
    { id: 'red', name: 'Red', oidc_groups: ['eng'], oidc_admin_groups: ['eng-leads'] },
    { id: 'blue', name: 'Blue', oidc_groups: ['ops'] },
  ],
  models: [centModel()],
};

const FORBIDDEN = { status: 403, code: 'forbidden', type: 'permission_error' } as const;

/** The users listing `subject`, as the admin API shows them. */
async function listing(gw: TestGateway, subject: string): Promise<{ id: string; spent: number; budget: number | null }[]> {
  const users = await gw.get('/v1/admin/users?limit=500');
  assert.equal(users.status, 200, JSON.stringify(users.body));
  return users.body.data.filter((user: { subjects: string[] | null }) => user.subjects?.includes(subject));
}

/** A user made by the bootstrap admin, with a key the admin made for it. */
async function userWithKey(gw: TestGateway, spec: Record<string, unknown>): Promise<Record<string, string>> {
  const user = await gw.post('/v1/admin/users', spec);
  assert.equal(user.status, 201, JSON.stringify(user.body));
  const key = await gw.post(`/v1/admin/users/${user.body.id}/keys`, { name: 'key' });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  return bearer(key.body.key);
}

describe('who may write subjects', () => {
  test("only an admin writes subjects: a team admin who points another person's identity at their team's user is refused 403, and the key they hold never becomes that person's", async (t) => {
    const gw = await bed.gateway(CONFIG, { t, store: 'memory', settings: { identityFile: await identityFile([idp]) } });
    const lead = await userWithKey(gw, { id: 'red-lead', name: 'Red lead', role: 'team_admin', team: 'red' });
    const dev = await userWithKey(gw, { id: 'red-dev', name: 'Red dev', team: 'red' });
    const blueUser = await gw.post('/v1/admin/users', { id: 'blue-ann', name: 'Ann', team: 'blue', subjects: ['idp#ann'] });
    assert.equal(blueUser.status, 201, JSON.stringify(blueUser.body));

    // The platform admin's identity, and a user of another team's: neither may be claimed.
    for (const subjects of [['idp#root'], ['idp#ann'], ['root']]) {
      const claimed = await gw.patch('/v1/admin/users/red-dev', { subjects }, lead);
      assertError(claimed, { ...FORBIDDEN, param: 'subjects', message: /only an admin/ });
      const made = await gw.post('/v1/admin/users', { name: 'Twin', subjects }, lead);
      assertError(made, { ...FORBIDDEN, param: 'subjects', message: /only an admin/ });
    }
    const self = await gw.patch('/v1/admin/users', { id: 'red-lead', subjects: ['idp#root'] }, lead);
    assertError(self, { ...FORBIDDEN, param: 'subjects' });

    // The admin's next token is the admin's own user; red-dev's key stays out of the admin's routes.
    const root = await token(idp, { sub: 'root', groups: ['platform'] });
    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(root))).status, 200);
    assert.equal((await gw.get('/v1/admin/routers', dev)).status, 403);
    const stored = await gw.get('/v1/admin/users/red-dev');
    assert.deepEqual([stored.body.role, stored.body.team, stored.body.subjects], ['user', 'red', null]);
    // Ann's token is still the blue team's user.
    const ann = await gw.get('/v1/me', bearer(await token(idp, { sub: 'ann', groups: ['ops'] })));
    assert.deepEqual([ann.status, ann.body.id], [200, 'blue-ann']);
  });

  test("a team admin still changes their team's users that list subjects, leaving the subjects as they are, but makes them no keys", async (t) => {
    const gw = await bed.gateway(CONFIG, { t, store: 'memory', settings: { identityFile: await identityFile([idp]) } });
    const lead = await userWithKey(gw, { id: 'red-lead', name: 'Red lead', role: 'team_admin', team: 'red' });
    const made = await gw.post('/v1/admin/users', { id: 'red-app', name: 'App', team: 'red', subjects: ['idp#app'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));

    const renamed = await gw.patch('/v1/admin/users/red-app', { name: 'The app', budget: '2', subjects: ['idp#app'] }, lead);
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.deepEqual(renamed.body.subjects, ['idp#app']);
    assertError(await gw.patch('/v1/admin/users/red-app', { subjects: null }, lead), { ...FORBIDDEN, param: 'subjects' });
    // A key would be the person's user with whatever team and role their groups give it next.
    assertError(await gw.post('/v1/admin/users/red-app/keys', { name: 'mine' }, lead), { ...FORBIDDEN, message: /calls with tokens/ });
    // An admin decides otherwise.
    assert.equal((await gw.post('/v1/admin/users/red-app/keys', { name: 'app' })).status, 201);
  });
});

describe('subjects scoped by issuer', () => {
  test("another issuer's token with the same subject is not the user, and the users made for one subject of two issuers are two, each id naming its issuer", async (t) => {
    const gw = await bed.gateway(CONFIG, { t, store: 'memory', settings: { identityFile: await identityFile([idp, other]) } });
    const sa = 'system:serviceaccount:apps:summarizer';
    const made = await gw.post('/v1/admin/users', { id: 'summarizer', name: 'Summarizer', budget: '5', subjects: [`idp#${sa}`] });
    assert.equal(made.status, 201, JSON.stringify(made.body));

    const stranger = await gw.post('/v1/chat/completions', ask, bearer(await token(other, { sub: sa })));
    assert.equal(stranger.status, 200, JSON.stringify(stranger.body));
    assert.equal((await gw.get('/v1/admin/users/summarizer')).body.spent, 0, "the other issuer's caller is not the summarizer");
    const [theirs] = await listing(gw, `other#${sa}`);
    assert.match(theirs!.id, /^other-system-serviceaccount-apps-summarizer-[0-9a-f]{8}$/);

    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(await token(idp, { sub: sa })))).status, 200);
    assert.equal((await gw.get('/v1/admin/users/summarizer')).body.spent, 0.01);

    // One subject, two issuers: two users made, neither id taken from the other.
    for (const issuer of [idp, other]) assert.equal((await gw.get('/v1/me', bearer(await token(issuer, { sub: 'sam' })))).status, 200);
    const [fromIdp] = await listing(gw, 'idp#sam');
    const [fromOther] = await listing(gw, 'other#sam');
    assert.match(fromIdp!.id, /^idp-sam-[0-9a-f]{8}$/);
    assert.match(fromOther!.id, /^other-sam-[0-9a-f]{8}$/);
  });

  test('a subject written without its issuer is refused by the admin API; subjects are written <issuer>#<subject>', async (t) => {
    const gw = await bed.gateway(CONFIG, { t, store: 'memory', settings: { identityFile: await identityFile([idp]) } });
    const bare = await gw.post('/v1/admin/users', { name: 'Bare', subjects: ['ann@example.com'] });
    assertError(bare, { status: 400, code: 'invalid_request', param: 'subjects', message: /idp#ann@example\.com|<issuer>#<subject>/ });
    const badIssuer = await gw.post('/v1/admin/users', { name: 'Bad', subjects: ['Not An Issuer#ann'] });
    assertError(badIssuer, { status: 400, code: 'invalid_request', param: 'subjects' });
    const scoped = await gw.post('/v1/admin/users', { id: 'ann', name: 'Ann', subjects: ['idp#ann@example.com'] });
    assert.equal(scoped.status, 201, JSON.stringify(scoped.body));
    const me = await gw.get('/v1/me', bearer(await token(idp, { sub: 'ann@example.com' })));
    assert.deepEqual([me.status, me.body.id], [200, 'ann']);
  });

  test('a subject written before subjects were scoped is the identity of the issuer unscoped_subjects names; with several issuers and none named, its token is refused naming the user', async (t) => {
    const legacy: GatewayConfig = { ...CONFIG, users: [{ id: 'legacy', name: 'Legacy', budget: '5', subjects: ['old-sub'] }] };
    const named = await bed.gateway(legacy, {
      t,
      store: 'memory',
      settings: { identityFile: await identityFile([idp, other], { unscoped_subjects: 'idp' }) },
    });
    const mine = await named.get('/v1/me', bearer(await token(idp, { sub: 'old-sub' })));
    assert.deepEqual([mine.status, mine.body.id], [200, 'legacy']);
    const theirs = await named.get('/v1/me', bearer(await token(other, { sub: 'old-sub' })));
    assert.equal(theirs.status, 200, JSON.stringify(theirs.body));
    assert.notEqual(theirs.body.id, 'legacy', "the other issuer's token is not the legacy user");

    const unnamed = await bed.gateway(legacy, { t, store: 'memory', settings: { identityFile: await identityFile([idp, other]) } });
    for (const issuer of [idp, other]) {
      const refused = await unnamed.post('/v1/chat/completions', ask, bearer(await token(issuer, { sub: 'old-sub' })));
      assertError(refused, { status: 401, code: 'invalid_token', message: /"legacy".*without its issuer/ });
    }
    assert.equal((await listing(unnamed, 'idp#old-sub')).length + (await listing(unnamed, 'other#old-sub')).length, 0, 'no twin made');
  });
});

describe('a user made with subjects through the admin API', () => {
  for (const store of ['memory', 'redis'] as const)
    test(`is the person's at their next token on a gateway that read its users long before (${store})`, async (t) => {
      const gw = await bed.gateway(CONFIG, { t, store, settings: { identityFile: await identityFile([idp]) } });
      // A first token: the gateway reads who lists which identity.
      assert.equal((await gw.post('/v1/chat/completions', ask, bearer(await token(idp, { sub: `early-${store}` })))).status, 200);

      const made = await gw.post('/v1/admin/users', {
        id: `dee-${store}`,
        name: 'Dee',
        budget: '0.01',
        subjects: [`idp#dee-${store}@example.com`],
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const dee = await token(idp, { sub: `dee-${store}@example.com` });
      assert.equal((await gw.post('/v1/chat/completions', ask, bearer(dee))).status, 200);
      const over = await gw.post('/v1/chat/completions', ask, bearer(dee));
      assert.equal(over.status, 402, "Dee's budget holds one request");
      assert.equal(over.headers.get('x-tollgate-limit-level'), 'user');
      assert.deepEqual(
        (await listing(gw, `idp#dee-${store}@example.com`)).map((user) => [user.id, user.spent]),
        [[`dee-${store}`, 0.01]],
        'no budget-less twin',
      );
    });

  test("made through one gateway, is the person's at their next token on another that read its users long before (Redis)", async (t) => {
    const [one, two] = await bed.gateways(2, CONFIG, { t, settings: { identityFile: await identityFile([idp]) } });
    for (const gw of [one!, two!])
      assert.equal((await gw.post('/v1/chat/completions', ask, bearer(await token(idp, { sub: 'early' })))).status, 200);

    const made = await two!.post('/v1/admin/users', { id: 'dee', name: 'Dee', budget: '0.01', subjects: ['idp#dee@example.com'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const dee = await token(idp, { sub: 'dee@example.com' });
    const served = await one!.get('/v1/me', bearer(dee));
    assert.deepEqual([served.status, served.body.id], [200, 'dee']);
    assert.equal((await one!.post('/v1/chat/completions', ask, bearer(dee))).status, 200);
    assert.equal((await two!.post('/v1/chat/completions', ask, bearer(dee))).status, 402, "Dee's budget holds one request");
    assert.deepEqual(
      (await listing(one!, 'idp#dee@example.com')).map((user) => user.id),
      ['dee'],
      'no budget-less twin',
    );
  });
});
