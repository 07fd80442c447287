// Who may call what (spec 5): access is decided on the route a request matched, so spelling a
// route differently (percent-encoded, absolute-form) cannot skip the key check; every route but
// the public ones (health, metrics, Playground) needs a key, the admin API an admin's key; and a
// URL that matches no route tells a caller without a key nothing.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError, send } from './helpers.ts';
import { rawRequest } from './raw-http.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

let gw: TestGateway;
let host: string;

before(async () => {
  gw = await bed.gateway({ models: [{ id: 'chat', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] }] });
  host = new URL(gw.url).host;
});

const MISSING = { status: 401, code: 'invalid_api_key', type: 'authentication_error', message: /^Missing API key/, param: null };

describe('/v1/models spelled another way still needs a key', () => {
  const forms = [
    { name: 'an encoded "v"', target: '/%761/models', listed: true },
    { name: 'an encoded "1"', target: '/v%31/models', listed: true },
    { name: 'an encoded "v" before a model', target: '/%761/models/chat', listed: false },
    { name: 'the absolute form', target: 'http://HOST/v1/models', listed: true },
  ];
  for (const form of forms) {
    test(`GET ${form.target} (${form.name}): 401 without a key, the model list or model with one`, async () => {
      const target = form.target.replace('HOST', host);
      const anonymous = await rawRequest(gw.url, `GET ${target} HTTP/1.1\r\nHost: ${host}`);
      assertError({ status: anonymous.status, headers: new Headers(anonymous.headers), text: anonymous.body }, MISSING);
      assert.doesNotMatch(anonymous.body, /"chat"/);

      const keyed = await rawRequest(gw.url, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${gw.adminKey}`);
      assert.equal(keyed.status, 200, keyed.body);
      const body = JSON.parse(keyed.body);
      if (form.listed)
        assert.deepEqual(
          body.data.map((m: { id: string }) => m.id),
          ['chat'],
        );
      else assert.equal(body.id, 'chat');
    });
  }
});

describe('every route needs a key unless it is public', () => {
  const PUBLIC = ['GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /playground', 'GET /playground/*', 'GET /auth/options'];

  /** Every method and path the gateway serves, read from the app's own route table (a tree, 4 columns a level). */
  const routes = () => {
    const found: string[] = [];
    const paths: string[] = [];
    for (const line of gw.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const match = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
      if (!match) continue;
      const depth = match[1]!.length / 4;
      const parent = depth === 0 ? '' : paths[depth - 1]!;
      paths[depth] = match[2]!.startsWith('/') ? parent + match[2] : `${parent}/${match[2]}`;
      for (const method of match[3]?.split(', ') ?? []) if (method !== 'HEAD') found.push(`${method} ${paths[depth]}`);
    }
    return found;
  };

  test('the route table holds the API (a check on the reading below)', () => {
    const all = routes();
    for (const route of [
      'GET /v1/models',
      'GET /v1/models/*',
      'POST /v1/chat/completions',
      'GET /v1/me/keys',
      'DELETE /v1/admin/users/:id/keys/:keyId',
      'GET /healthz',
      'GET /playground/*',
    ]) {
      assert.ok(all.includes(route), `${route} in ${all.join(', ')}`);
    }
  });

  test('each route that is not public answers 401 without a key; the public ones answer', async () => {
    for (const route of routes()) {
      const [method, pattern] = route.split(' ') as [string, string];
      const path = pattern.replace(/:[A-Za-z]+/g, 'x').replace('*', 'x');
      const answer = await send(gw, method, path, undefined, { authorization: '' });
      if (PUBLIC.includes(route)) assert.notEqual(answer.status, 401, `${route} is public`);
      else assertError(answer, MISSING);
    }
  });

  test('an unknown URL without a key gets 401, not a 404 that would tell routes apart', async () => {
    for (const path of ['/v1/nothing-here', '/nothing-here', '/%761/nothing']) {
      assertError(await send(gw, 'GET', path, undefined, { authorization: '' }), MISSING);
    }
  });

  test('the admin API needs an admin key, whichever way its path is spelled', async () => {
    const user = await gw.post('/v1/admin/users', { name: 'Not an admin' });
    const key = (await gw.post(`/v1/admin/users/${user.body.id}/keys`, { name: 'k' })).body.key;
    for (const target of ['/v1/admin/users', '/v1/%61dmin/users', `http://${host}/v1/admin/users`]) {
      const answer = await rawRequest(gw.url, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}`);
      assert.equal(answer.status, 403, `${target}: ${answer.body}`);
      assert.equal(JSON.parse(answer.body).error.code, 'admin_required');
    }
  });
});
