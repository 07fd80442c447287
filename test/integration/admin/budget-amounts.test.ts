// A budget given to the admin API as a string is a plain decimal ("25.50"): "1e3" or " 5 " is a
// 400 naming the field, and nothing is created or changed; a JSON number is still taken.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError, invalid } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

let gw: TestGateway;

before(async () => {
  gw = await bed.gateway({ models: [{ id: 'm', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] }] });
});

const NOT_PLAIN =
  /^budget: amount must be a decimal number written as digits, with a point and at most 6 decimals, such as "25\.50" \(no exponent, spaces or sign\), got /;

test('a budget string with an exponent or spaces is a 400, on create and on change', async () => {
  assertError(await gw.post('/v1/admin/users', { name: 'Exponent', budget: '1e3' }), invalid('budget', NOT_PLAIN));
  assertError(await gw.post('/v1/admin/teams', { id: 'spaced', name: 'Spaced', budget: ' 5 ' }), invalid('budget', NOT_PLAIN));
  const created = await gw.post('/v1/admin/users', { name: 'Plain', budget: '5' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assertError(await gw.patch(`/v1/admin/users/${created.body.id}`, { budget: '5e2' }), invalid('budget', NOT_PLAIN));
  assert.equal((await gw.get(`/v1/admin/users/${created.body.id}`)).body.budget, 5, 'unchanged');
  const users = (await gw.get('/v1/admin/users')).body.data as { name: string }[];
  assert.ok(!users.some((u) => u.name === 'Exponent'), 'nothing created');
});

test('a plain decimal string and a JSON number are both taken', async () => {
  const fromString = await gw.post('/v1/admin/users', { name: 'String', budget: '25.50' });
  assert.equal(fromString.status, 201, JSON.stringify(fromString.body));
  assert.equal(fromString.body.budget, 25.5);
  const fromNumber = await gw.post('/v1/admin/users', { name: 'Number', budget: 1000 });
  assert.equal(fromNumber.status, 201, JSON.stringify(fromNumber.body));
  assert.equal(fromNumber.body.budget, 1000);
});
