// How many users tokens may make (security review, finding 20): one minting source made 3,000
// users in 17 s. Each issuer makes at most max_new_users_per_minute a minute on a gateway; past it
// a new identity is refused with 429 in its API's envelope, saying when to come back, while people
// already known, and newcomers of another issuer, are served; tollgate_users_made_total and the
// refusals' reason too_many_new_users count them. Tokens are signed by keys served on a real socket.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { userIdFor } from '../../../gateway/identity/token-identity.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { CENT_REQUEST, centModel } from '../../support/priced-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { AUDIENCE, bearer, startTokenIssuer, type TokenIssuer } from '../../support/token-issuer.ts';

const bed = testBed({ redis: true });
const CONFIG: GatewayConfig = {
  users: [{ id: 'summarizer', name: 'Summarizer', budget: '5', subjects: ['idp#system:serviceaccount:apps:summarizer'] }],
  models: [centModel()],
};
const ask = CENT_REQUEST;

let minting: TokenIssuer;
let other: TokenIssuer;
before(async () => {
  minting = await startTokenIssuer();
  other = await startTokenIssuer();
});
after(async () => {
  await minting?.close();
  await other?.close();
});

describe('users made for tokens', () => {
  test('are at most max_new_users_per_minute a minute per issuer: the next newcomer gets 429 saying when to retry, people known are served', async (t) => {
    // The bucket refills one user each 30 s: the few requests below take far less than that.
    const file = await minting.identityFile({
      unmapped: 'default',
      max_new_users_per_minute: 2,
      issuers: [
        { name: 'idp', issuer: minting.issuer, audiences: [AUDIENCE], algorithms: ['RS256'], groups_claim: 'groups' },
        { name: 'other', issuer: other.issuer, audiences: [AUDIENCE], algorithms: ['RS256'] },
      ],
    });
    const gw = await bed.gateway(CONFIG, { t, settings: { identityFile: file } });
    for (const sub of ['new-1', 'new-2'])
      assert.equal((await gw.post('/v1/chat/completions', ask, bearer(await minting.token({ sub })))).status, 200, sub);

    const refused = await gw.post('/v1/chat/completions', ask, bearer(await minting.token({ sub: 'new-3' })));
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error.code, refused.body.error.type], ['rate_limit_exceeded', 'rate_limit_error']);
    assert.match(
      refused.body.error.message,
      /^Too many users new to this gateway came with idp in the last minute \(at most 2 a minute\): try again in \d+s$/,
    );
    assert.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After says when');
    const anthropic = await gw.post(
      '/v1/messages',
      { model: 'priced', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      { authorization: '', 'x-api-key': await minting.token({ sub: 'new-4' }) },
    );
    assert.equal(anthropic.status, 429);
    assert.deepEqual([anthropic.body.type, anthropic.body.error.type], ['error', 'rate_limit_error']);
    for (const sub of ['new-3', 'new-4'])
      assert.equal((await gw.get(`/v1/admin/users/${userIdFor('idp', sub)}`)).status, 404, `${sub} was not made`);

    // People known, by a user made before or listing their identity, and another issuer's newcomers.
    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(await minting.token({ sub: 'new-1' })))).status, 200);
    const app = await minting.token({ sub: 'system:serviceaccount:apps:summarizer' });
    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(app))).status, 200);
    assert.equal((await gw.post('/v1/chat/completions', ask, bearer(await other.token({ sub: 'elsewhere' })))).status, 200);

    const metrics = (await gw.get('/metrics')).body as string;
    assert.match(metrics, /^tollgate_token_refusals_total\{reason="too_many_new_users"\} 2$/m);
    assert.match(metrics, /^tollgate_users_made_total\{issuer="idp"\} 2$/m);
    assert.match(metrics, /^tollgate_users_made_total\{issuer="other"\} 1$/m);
  });
});
