// API keys in number: a user holds at most --max-keys-per-user active keys (409 past that,
// whether they make it themselves or an admin does; a revoked key frees its place), and the key
// lists come in pages (`limit`, `after` = the previous page's `next`) like every other list.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError, createUser, invalid } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const MAX_KEYS = 3;
let gw: TestGateway;

before(async () => {
  gw = await bed.gateway(
    { models: [{ id: 'chat', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] }] },
    {
      settings: { maxKeysPerUser: MAX_KEYS },
    },
  );
});

const tooMany = {
  status: 409,
  code: 'key_limit_reached',
  type: 'invalid_request_error',
  param: null,
  message: `The user already has ${MAX_KEYS} active API keys, the most allowed; revoke one first (or let one expire)`,
};

describe('the most active keys a user holds', () => {
  test('a user makes keys up to the most, one more is 409; revoking one makes room', async () => {
    const me = await createUser(gw, { name: 'Hoarder' }); // holds one key already
    for (let i = 1; i < MAX_KEYS; i++) assert.equal((await gw.post('/v1/me/keys', { name: `k${i}` }, me.auth)).status, 201);
    assertError(await gw.post('/v1/me/keys', { name: 'one too many' }, me.auth), tooMany);
    assertError(await gw.post(`/v1/admin/users/${me.id}/keys`, { name: 'admin too' }), tooMany);

    const listed = (await gw.get('/v1/me/keys', me.auth)).body.data;
    assert.equal(listed.length, MAX_KEYS, 'the refused keys were not made');
    const other = listed.find((key: { id: string }) => key.id !== me.keyId); // not the key in use
    assert.equal((await gw.delete(`/v1/me/keys/${other.id}`, me.auth)).status, 200);
    assert.equal((await gw.post(`/v1/admin/users/${me.id}/keys`, { name: 'in its place' })).status, 201);
    assertError(await gw.post('/v1/me/keys', { name: 'full again' }, me.auth), tooMany);
  });
});

describe('key lists come in pages', () => {
  const lists = [
    { who: '/v1/me/keys', path: (_id: string) => '/v1/me/keys', asAdmin: false },
    { who: '/v1/admin/users/{id}/keys', path: (id: string) => `/v1/admin/users/${id}/keys`, asAdmin: true },
  ];
  for (const { who, path, asAdmin } of lists) {
    test(`${who}: limit and after walk every key once, in the order they were made`, async () => {
      const me = await createUser(gw, { name: 'Pager' });
      const reader = asAdmin ? {} : me.auth;
      for (let i = 1; i < MAX_KEYS; i++) await gw.post('/v1/me/keys', { name: `k${i}` }, me.auth);
      // Not the key in use: keys made in the same millisecond are ordered by id, so its place varies.
      const revoked = (await gw.get(path(me.id), reader)).body.data.find((key: { id: string }) => key.id !== me.keyId).id;
      await gw.delete(`/v1/me/keys/${revoked}`, me.auth);
      await gw.post('/v1/me/keys', { name: 'k3' }, me.auth);
      const all = (await gw.get(path(me.id), reader)).body;
      assert.equal(all.data.length, MAX_KEYS + 1, 'revoked keys are listed too');
      assert.equal(all.next, null);
      assert.equal(all.object, 'list');

      const seen: string[] = [];
      let after: string | null = null;
      do {
        const page: any = await gw.get(`${path(me.id)}?limit=2${after ? `&after=${after}` : ''}`, reader);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.ok(page.body.data.length <= 2);
        seen.push(...page.body.data.map((k: { id: string }) => k.id));
        after = page.body.next;
        if (after) assert.equal(after, page.body.data.at(-1).id);
      } while (after);
      assert.deepEqual(
        seen,
        all.data.map((k: { id: string }) => k.id),
      );
    });
  }

  test('a bad limit or after is a 400 naming it', async () => {
    const me = await createUser(gw, { name: 'Careless pager' });
    assertError(await gw.get('/v1/me/keys?limit=0', me.auth), invalid('limit'));
    assertError(await gw.get('/v1/me/keys?limit=501', me.auth), invalid('limit'));
    assertError(await gw.get('/v1/me/keys?after=k-not-mine', me.auth), invalid('after'));
    assertError(await gw.get('/v1/me/keys?page=2', me.auth), invalid('page'));
  });
});
