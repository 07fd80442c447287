// The admin API on a Redis store shared by two gateways. The gateway that makes a change serves
// it from its caller's next request. The other gateway follows the change: catalog and account
// changes are published, and budgets are read from the store on every request.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { assertError, chat, createUser, waitUntil, type TestUser } from './helpers.ts';

const bed = testBed({ redis: true });
let a: TestGateway;
let b: TestGateway;
let user: TestUser;

before(async () => {
  a = await bed.gateway({ models: [] });
  b = await bed.gateway({ models: [] });
  user = await createUser(a, { name: 'Shared', budget: 0 });
});

describe('admin API on a shared Redis store', () => {
  test('a router and provider made on one gateway answer there at once, and on the other once it follows', async () => {
    assert.equal(
      (await a.post('/v1/admin/routers', { name: 'shared', type: 'text-generation', costs: { prompt_tokens: 1, completion_tokens: 1 } }))
        .status,
      201,
    );
    assert.equal(
      (await a.post('/v1/admin/providers', { id: 'shared-sim', router: 'shared', type: 'simulator', model_name: 'sim' })).status,
      201,
    );
    assert.equal((await a.patch(`/v1/admin/users/${user.id}`, { budget: 1 })).status, 200);
    const answer = await chat(a, 'shared', user.auth);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));

    const onB = await waitUntil(
      () => chat(b, 'shared', user.auth),
      (r) => r.status === 200,
    );
    assert.equal(onB.status, 200, JSON.stringify(onB.body));
    assert.equal((await b.get('/v1/admin/providers/shared-sim')).body.router, 'shared', 'the catalog is shared');
  });

  test('a budget lowered on one gateway applies to the next request on the other', async () => {
    assert.equal((await b.patch(`/v1/admin/users/${user.id}`, { budget: 0 })).status, 200);
    assertError(await chat(a, 'shared', user.auth), { status: 402, code: 'insufficient_budget' });
  });

  // The other gateway caches keys and drops a user's entries when Redis tells it the user changed:
  // that notice can arrive a moment after the revoking answer, so the test waits for it.
  test('a key revoked on one gateway is refused by the other once the change notice arrives', async () => {
    assert.equal((await a.get('/v1/me', user.auth)).status, 200, "the key is in the other gateway's cache");
    assert.equal((await b.delete(`/v1/admin/users/${user.id}/keys/${user.keyId}`)).status, 200);
    const refused = await waitUntil(
      () => a.get('/v1/me', user.auth),
      (answer) => answer.status === 401,
    );
    assertError(refused, { status: 401, code: 'invalid_api_key', message: 'This API key has been revoked' });
  });
});
