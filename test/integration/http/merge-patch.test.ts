// The admin API's PATCH is a JSON Merge Patch (RFC 7396), whose media type is
// application/merge-patch+json: a PATCH with it is read as JSON, as with application/json. Any
// other method refuses it (415) as any type it does not take: a merge patch is only a PATCH's.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError } from '../../support/api-errors.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const MERGE_PATCH = 'application/merge-patch+json';

let gw: TestGateway;
let userId: string;

before(async () => {
  gw = await bed.gateway({ models: [{ id: 'm', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] }] });
  const created = await gw.post('/v1/admin/users', { name: 'Merged', budget: '5', budget_period: 'monthly' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  userId = created.body.id;
});

test('a PATCH of application/merge-patch+json is applied as a merge patch: a field changed, null removes one', async () => {
  const answer = await gw.patch(`/v1/admin/users/${userId}`, { budget: '7.5', budget_period: null }, { 'content-type': MERGE_PATCH });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.budget, 7.5);
  assert.equal(answer.body.budget_period, null);
  assert.equal(answer.body.name, 'Merged', 'a field left out keeps its value');
});

test('with a charset parameter too, and application/json still', async () => {
  const withCharset = await gw.patch(`/v1/admin/users/${userId}`, { name: 'Charset' }, { 'content-type': `${MERGE_PATCH}; charset=utf-8` });
  assert.equal(withCharset.status, 200, JSON.stringify(withCharset.body));
  assert.equal(withCharset.body.name, 'Charset');
  const json = await gw.patch(`/v1/admin/users/${userId}`, { name: 'Plain JSON' });
  assert.equal(json.status, 200, JSON.stringify(json.body));
  assert.equal(json.body.name, 'Plain JSON');
});

test('a merge patch body is checked as any JSON body: broken JSON is a 400 that says where', async () => {
  assertError(await gw.patch(`/v1/admin/users/${userId}`, '{"name": ', { 'content-type': MERGE_PATCH }), {
    status: 400,
    code: 'invalid_json',
  });
});

test('any other method refuses application/merge-patch+json with 415', async () => {
  assertError(await gw.post('/v1/admin/users', { name: 'Not a patch' }, { 'content-type': MERGE_PATCH }), {
    status: 415,
    code: 'unsupported_media_type',
    message: `Content-Type must be application/json, got ${MERGE_PATCH}`,
  });
  assertError(
    await gw.post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'content-type': MERGE_PATCH }),
    { status: 415, code: 'unsupported_media_type' },
  );
  assert.equal((await gw.get(`/v1/admin/users/${userId}`)).body.name, 'Plain JSON', 'nothing was changed');
});
