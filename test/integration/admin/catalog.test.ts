// The admin API's routers and providers, through a real gateway: CRUD, names and aliases unique
// (409), unknown ones 404, validation 400 with the field's path, a provider's key never shown,
// and every change served by the very next request, without a restart.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { ADMIN_REQUIRED, assertError, chat, conflict, createUser, invalid, notFound, usageRecords, type TestUser } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const PROVIDER_SECRET = 'sk-provider-secret-0123456789abcdef';

let gw: TestGateway;
let fake: FakeBackend;
let user: TestUser;

before(async () => {
  fake = await startFakeOpenAI();
  gw = await bed.gateway({
    models: [{ id: 'from-file', type: 'text-generation', aliases: ['file-alias'], providers: [{ model: 'sim', type: 'simulator' }] }],
  });
  user = await createUser(gw, { name: 'Caller' });
});

after(async () => {
  await fake.close();
});

const router = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'text-generation', ...extra });
const simulator = (routerName: string, extra: Record<string, unknown> = {}) => ({
  router: routerName,
  type: 'simulator',
  model_name: 'sim-model',
  ...extra,
});

describe('routers', () => {
  test('POST creates a router with its defaults, prices per million tokens as numbers', async () => {
    const answer = await gw.post(
      '/v1/admin/routers',
      router('r-basic', { aliases: ['r-basic-alias'], costs: { prompt_tokens: '0.15', completion_tokens: 0.6 } }),
    );
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.deepEqual(answer.body, {
      object: 'router',
      name: 'r-basic',
      type: 'text-generation',
      load_balancing_strategy: 'shuffle',
      routing_mode: null,
      queue: null,
      aliases: ['r-basic-alias'],
      fallbacks: [],
      context_fallback: null,
      costs: { prompt_tokens: 0.15, completion_tokens: 0.6, audio_minutes: 0 },
      costs_unit: 'per_million_tokens',
      max_context_length: 8192,
      max_completion_tokens: null,
      rate_limits: null,
      providers: [],
    });
    const models = await gw.get('/v1/models');
    assert.ok(
      models.body.data.some((m: any) => m.id === 'r-basic'),
      'listed by /v1/models at once',
    );
  });

  test('GET lists every router (those of the config file too) and reads one by name, slashes included', async () => {
    assert.equal((await gw.post('/v1/admin/routers', router('org/slashed'))).status, 201);
    const list = await gw.get('/v1/admin/routers');
    assert.equal(list.status, 200);
    assert.equal(list.body.object, 'list');
    const names = list.body.data.map((r: any) => r.name);
    for (const name of ['from-file', 'org/slashed']) assert.ok(names.includes(name), name);
    const fromFile = list.body.data.find((r: any) => r.name === 'from-file');
    assert.equal(fromFile.providers.length, 1);

    for (const path of ['/v1/admin/routers/org/slashed', '/v1/admin/routers/org%2Fslashed']) {
      const one = await gw.get(path);
      assert.equal(one.status, 200, path);
      assert.equal(one.body.name, 'org/slashed');
    }
    assertError(await gw.get('/v1/admin/routers/nope'), notFound('Router "nope" not found'));
    // Aliases are for calling a router, not for naming it in the admin API.
    assertError(await gw.get('/v1/admin/routers/file-alias'), notFound('Router "file-alias" not found'));
  });

  test('a name or alias already used by a router is a 409 naming the field', async () => {
    assertError(await gw.post('/v1/admin/routers', router('from-file')), conflict('name', 'Router "from-file" already exists'));
    assertError(
      await gw.post('/v1/admin/routers', router('file-alias')),
      conflict('name', '"file-alias" is already used by router "from-file"'),
    );
    assertError(
      await gw.post('/v1/admin/routers', router('r-new', { aliases: ['ok', 'from-file'] })),
      conflict('aliases[1]', '"from-file" is already used by router "from-file"'),
    );
    assertError(await gw.patch('/v1/admin/routers/r-basic', { aliases: ['file-alias'] }), conflict('aliases[0]'));
    assertError(
      await gw.post('/v1/admin/routers', router('r-twice', { aliases: ['r-twice'] })),
      invalid('aliases[0]', 'aliases[0]: "r-twice" is listed twice for this router'),
    );
    assert.equal((await gw.get('/v1/admin/routers/r-new')).status, 404, 'nothing was created');
  });

  const invalidCases: [string, unknown, string | null, string | RegExp][] = [
    ['a missing type', { name: 'x' }, 'type', /^type: is required \(Invalid option: expected one of "text-generation"\|/],
    ['an unknown type', { name: 'x', type: 'text-to-speech' }, 'type', /^type: /],
    ['an unknown strategy', router('x', { load_balancing_strategy: 'fastest' }), 'load_balancing_strategy', /^load_balancing_strategy: /],
    [
      'a negative price',
      router('x', { costs: { prompt_tokens: -1 } }),
      'costs.prompt_tokens',
      'costs.prompt_tokens: price per million tokens must not be negative',
    ],
    [
      'a price that is not a number',
      router('x', { costs: { completion_tokens: 'cheap' } }),
      'costs.completion_tokens',
      /^costs\.completion_tokens: price per million tokens must be a decimal number/,
    ],
    ['an invalid name', router('bad name'), 'name', /^name: must start with a letter or digit/],
    ['an unknown field', router('x', { owner: 'me' }), 'owner', 'owner: unknown field'],
    [
      'a bad rate limit',
      router('x', { rate_limits: { requests_per_hour: 5 } }),
      'rate_limits.requests_per_hour',
      'rate_limits.requests_per_hour: unknown field',
    ],
    ['a zero context length', router('x', { max_context_length: 0 }), 'max_context_length', /^max_context_length: /],
  ];
  for (const [what, body, param, message] of invalidCases) {
    test(`POST: 400 with the field's path for ${what}`, async () => {
      assertError(await gw.post('/v1/admin/routers', body), invalid(param, message));
    });
  }

  test('PATCH merges onto the router (costs key by key, null removes), validated whole', async () => {
    await gw.post(
      '/v1/admin/routers',
      router('r-patch', { costs: { prompt_tokens: 1, completion_tokens: 2 }, max_completion_tokens: 100 }),
    );
    const answer = await gw.patch('/v1/admin/routers/r-patch', {
      costs: { prompt_tokens: 3 },
      max_completion_tokens: null,
      rate_limits: { requests_per_minute: 5 },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.costs, { prompt_tokens: 3, completion_tokens: 2, audio_minutes: 0 });
    assert.equal(answer.body.max_completion_tokens, null);
    assert.deepEqual(answer.body.rate_limits, { requests_per_minute: 5 });
    assert.deepEqual((await gw.get('/v1/admin/routers/r-patch')).body, answer.body, 'stored');
    assertError(
      await gw.patch('/v1/admin/routers/r-patch', { costs: { prompt_tokens: '0.0000000001' } }),
      invalid('costs.prompt_tokens', /at most 9 decimal places/),
    );
    assertError(await gw.patch('/v1/admin/routers/nope', { aliases: [] }), notFound('Router "nope" not found'));
  });

  test('PATCH cannot rename; PATCH /v1/admin/routers takes the name in the body', async () => {
    assertError(
      await gw.patch('/v1/admin/routers/r-patch', { name: 'renamed' }),
      invalid('name', /^name: a router's name cannot be changed/),
    );
    const answer = await gw.patch('/v1/admin/routers', { name: 'r-patch', aliases: ['r-patch-alias'] });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.aliases, ['r-patch-alias']);
    assertError(await gw.patch('/v1/admin/routers', { aliases: [] }), invalid('name', /^name: is required/));
  });

  test('a new router with a simulator provider answers a chat request at once, by name and alias', async () => {
    assert.equal((await gw.post('/v1/admin/routers', router('r-live', { aliases: ['live'] }))).status, 201);
    const provider = await gw.post('/v1/admin/providers', simulator('r-live'));
    assert.equal(provider.status, 201, JSON.stringify(provider.body));
    for (const model of ['r-live', 'live']) {
      const answer = await chat(gw, model, user.auth);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.model, 'r-live');
      assert.equal(answer.body.usage.completion_tokens, 32);
    }
  });

  test('a price change applies to the next request', async () => {
    await gw.post('/v1/admin/routers', router('r-price'));
    await gw.post('/v1/admin/providers', simulator('r-price'));
    assert.equal((await chat(gw, 'r-price', user.auth)).body.usage.cost, 0);
    assert.equal((await gw.patch('/v1/admin/routers/r-price', { costs: { completion_tokens: 1_000_000 } })).status, 200);
    const answer = await chat(gw, 'r-price', user.auth);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.usage.cost, answer.body.usage.completion_tokens, '1 per completion token');
  });

  test('DELETE removes the router with its providers, and says which', async () => {
    await gw.post('/v1/admin/routers', router('r-doomed', { aliases: ['doomed'] }));
    const a = (await gw.post('/v1/admin/providers', simulator('r-doomed'))).body.id;
    const b = (await gw.post('/v1/admin/providers', simulator('r-doomed'))).body.id;
    assert.equal((await chat(gw, 'doomed', user.auth)).status, 200);
    const answer = await gw.delete('/v1/admin/routers/r-doomed');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { object: 'router', name: 'r-doomed', deleted: true, deleted_providers: [a, b] });
    assertError(await chat(gw, 'doomed', user.auth), { status: 404, code: 'model_not_found', message: 'Model not found' });
    assertError(await gw.get(`/v1/admin/providers/${a}`), notFound());
    assertError(await gw.delete('/v1/admin/routers/r-doomed'), notFound('Router "r-doomed" not found'));
    assert.equal((await gw.post('/v1/admin/routers', router('doomed'))).status, 201, 'its alias is free again');
  });
});

describe('providers', () => {
  before(async () => {
    assert.equal((await gw.post('/v1/admin/routers', router('p-router'))).status, 201);
    assert.equal((await gw.post('/v1/admin/routers', router('p-other'))).status, 201);
  });

  test('POST creates a provider with a generated id; the key is write-only', async () => {
    const answer = await gw.post('/v1/admin/providers', {
      router: 'p-router',
      type: 'openai',
      model_name: 'gpt-x',
      url: fake.url,
      key: PROVIDER_SECRET,
      timeout: 5,
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.match(answer.body.id, /^p-router-[0-9a-f]{6}$/);
    assert.deepEqual(answer.body, {
      object: 'provider',
      id: answer.body.id,
      router: 'p-router',
      type: 'openai',
      model_name: 'gpt-x',
      timeout: 5,
      url: fake.url,
      carbon: null,
      has_key: true,
    });
    assert.deepEqual((await gw.get('/v1/admin/routers/p-router')).body.providers, [answer.body.id]);
  });

  test('the key is used upstream and never appears in any answer; PATCH keeps it when absent and clears it with null', async () => {
    const created = await gw.post('/v1/admin/providers', {
      id: 'keyed',
      router: 'p-other',
      type: 'vllm',
      model_name: 'm',
      url: fake.url,
      key: PROVIDER_SECRET,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const sentKey = async () => {
      const before = fake.requests.length;
      assert.equal((await chat(gw, 'p-other', user.auth)).status, 200);
      assert.equal(fake.requests.length, before + 1);
      return fake.requests.at(-1)!.headers.authorization;
    };
    assert.equal(await sentKey(), `Bearer ${PROVIDER_SECRET}`);

    const kept = await gw.patch('/v1/admin/providers/keyed', { timeout: 7 });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal(kept.body.has_key, true);
    assert.equal(kept.body.timeout, 7);
    assert.equal(await sentKey(), `Bearer ${PROVIDER_SECRET}`, 'absent key: kept');

    const answers = [
      created,
      kept,
      await gw.get('/v1/admin/providers/keyed'),
      await gw.get('/v1/admin/providers'),
      await gw.get('/v1/admin/routers'),
      await gw.get('/v1/admin/routers/p-other'),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 200 + (answer === created ? 1 : 0));
      assert.ok(!JSON.stringify(answer.body).includes(PROVIDER_SECRET), 'provider key shown');
      assert.ok(!JSON.stringify(answer.body).includes('"key"'), 'a key field shown');
    }

    const cleared = await gw.patch('/v1/admin/providers/keyed', { key: null });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.has_key, false);
    assert.equal(await sentKey(), undefined, 'key: null clears it');

    const replaced = await gw.patch('/v1/admin/providers/keyed', { key: 'sk-another' });
    assert.equal(replaced.body.has_key, true);
    assert.equal(await sentKey(), 'Bearer sk-another');
  });

  test('a url with credentials (up to the last @) and secret query values is shown masked, and used as given', async () => {
    const url = 'http://user:p@ssw0rd@vllm.internal:8000/base?api_key=qk-7f3e&api-version=2';
    const created = await gw.post('/v1/admin/providers', { id: 'url-secrets', router: 'p-other', type: 'vllm', model_name: 'm', url });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const shown = 'http://***@vllm.internal:8000/base?api_key=***&api-version=2';
    const listed = await gw.get('/v1/admin/providers?router=p-other');
    const views = [
      created.body,
      (await gw.get('/v1/admin/providers/url-secrets')).body,
      listed.body.data.find((p: any) => p.id === 'url-secrets'),
    ];
    for (const view of views) assert.equal(view.url, shown);
    for (const secret of ['ssw0rd', 'p@ss', 'qk-7f3e']) assert.ok(!JSON.stringify(listed.body).includes(secret), `${secret} shown`);
    assert.equal((await gw.delete('/v1/admin/providers/url-secrets')).status, 200);
  });

  test('GET lists providers, filtered by router; GET :id reads one', async () => {
    const all = await gw.get('/v1/admin/providers');
    assert.equal(all.status, 200);
    assert.equal(all.body.object, 'list');
    assert.ok(all.body.data.some((p: any) => p.router === 'from-file'));
    const filtered = await gw.get('/v1/admin/providers?router=p-other');
    assert.deepEqual(
      filtered.body.data.map((p: any) => p.id),
      ['keyed'],
    );
    const one = await gw.get('/v1/admin/providers/keyed');
    assert.equal(one.status, 200);
    assert.equal(one.body.router, 'p-other');
    assertError(await gw.get('/v1/admin/providers?router=nope'), notFound('Router "nope" not found', 'router'));
    assertError(await gw.get('/v1/admin/providers/nope'), notFound('Provider "nope" not found'));
    assertError(await gw.get('/v1/admin/providers?type=vllm'), invalid('type', 'type: unknown field'));
  });

  test('a provider naming a router that does not exist is a 404 naming it, on create and on update', async () => {
    assertError(await gw.post('/v1/admin/providers', simulator('ghost')), notFound('Router "ghost" not found', 'router'));
    assertError(await gw.patch('/v1/admin/providers/keyed', { router: 'ghost' }), notFound('Router "ghost" not found', 'router'));
  });

  test('an id already taken is a 409', async () => {
    assertError(
      await gw.post('/v1/admin/providers', simulator('p-router', { id: 'keyed' })),
      conflict('id', 'A provider with id "keyed" already exists'),
    );
  });

  const invalidCases: [string, unknown, string | null, string | RegExp][] = [
    ['an unknown type', { router: 'p-router', type: 'bedrock', model_name: 'm' }, 'type', /^type: Invalid discriminator value/],
    ['a missing url where the type needs one', { router: 'p-router', type: 'vllm', model_name: 'm' }, 'url', 'url: is required'],
    [
      'a url ending in /v1',
      { router: 'p-router', type: 'vllm', model_name: 'm', url: 'http://backend:8000/v1' },
      'url',
      /^url: must be the base address without \/v1/,
    ],
    ['a missing model_name', { router: 'p-router', type: 'simulator' }, 'model_name', 'model_name: is required'],
    ['a zero timeout', simulator('p-router', { timeout: 0 }), 'timeout', 'timeout: must be more than 0 seconds'],
    [
      'a simulator option out of range',
      simulator('p-router', { simulator: { completion_tokens: 0 } }),
      'simulator.completion_tokens',
      /^simulator\.completion_tokens: /,
    ],
    ['a url on a simulator', simulator('p-router', { url: 'http://x' }), 'url', 'url: unknown field'],
    ['an invalid id', simulator('p-router', { id: 'Bad_Id' }), 'id', /^id: must be lowercase/],
  ];
  for (const [what, body, param, message] of invalidCases) {
    test(`POST: 400 with the field's path for ${what}`, async () => {
      assertError(await gw.post('/v1/admin/providers', body), invalid(param, message));
    });
  }

  test('PATCH applies to the next request; the id cannot change', async () => {
    await gw.post('/v1/admin/routers', router('p-sim'));
    await gw.post('/v1/admin/providers', simulator('p-sim', { id: 'p-sim-1' }));
    assert.equal((await chat(gw, 'p-sim', user.auth)).body.usage.completion_tokens, 32);
    const answer = await gw.patch('/v1/admin/providers/p-sim-1', { simulator: { completion_tokens: 5 } });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.simulator, { latency_ms: 0, tokens_per_second: 0, completion_tokens: 5 });
    assert.equal((await chat(gw, 'p-sim', user.auth)).body.usage.completion_tokens, 5);
    assertError(await gw.patch('/v1/admin/providers/p-sim-1', { id: 'other' }), invalid('id', /^id: a provider's id cannot be changed/));
    assertError(await gw.patch('/v1/admin/providers/p-sim-1', { timeout: -1 }), invalid('timeout'));
    assertError(await gw.patch('/v1/admin/providers/nope', { timeout: 1 }), notFound('Provider "nope" not found'));
  });

  test('a deleted provider is no longer used', async () => {
    await gw.post('/v1/admin/routers', router('p-pair'));
    await gw.post('/v1/admin/providers', simulator('p-pair', { id: 'p-pair-a' }));
    await gw.post('/v1/admin/providers', simulator('p-pair', { id: 'p-pair-b' }));
    const deleted = await gw.delete('/v1/admin/providers/p-pair-a');
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { object: 'provider', id: 'p-pair-a', router: 'p-pair', deleted: true });
    assert.deepEqual((await gw.get('/v1/admin/routers/p-pair')).body.providers, ['p-pair-b']);

    const caller = await createUser(gw, { name: 'Pair caller' });
    for (let i = 0; i < 8; i++) assert.equal((await chat(gw, 'p-pair', caller.auth)).status, 200);
    const usage = await usageRecords(gw, caller.auth, 8, '?model=p-pair');
    assert.deepEqual(new Set(usage.body.data.map((r: any) => r.provider)), new Set(['p-pair-b']));
    assertError(await gw.delete('/v1/admin/providers/p-pair-a'), notFound('Provider "p-pair-a" not found'));
  });
});

describe('permission', () => {
  const routes: [string, string, unknown?][] = [
    ['POST', '/v1/admin/routers', router('x')],
    ['GET', '/v1/admin/routers'],
    ['GET', '/v1/admin/routers/from-file'],
    ['PATCH', '/v1/admin/routers/from-file', { aliases: [] }],
    ['PATCH', '/v1/admin/routers', { name: 'from-file', aliases: [] }],
    ['DELETE', '/v1/admin/routers/from-file'],
    ['POST', '/v1/admin/providers', simulator('from-file')],
    ['GET', '/v1/admin/providers'],
    ['GET', '/v1/admin/providers/from-file-0'],
    ['PATCH', '/v1/admin/providers/from-file-0', { timeout: 1 }],
    ['DELETE', '/v1/admin/providers/from-file-0'],
  ];
  for (const [method, path, body] of routes) {
    test(`${method} ${path}: 403 for a non-admin key, 401 without one`, async () => {
      const headers = body === undefined ? user.auth : { ...user.auth, 'content-type': 'application/json' };
      const send = (h: Record<string, string>) =>
        fetch(gw.url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => ({
          status: r.status,
          headers: r.headers,
          body: await r.json(),
        }));
      assertError(await send(headers), ADMIN_REQUIRED);
      const { authorization: _, ...anonymous } = headers;
      assertError(await send(anonymous), { status: 401, code: 'invalid_api_key' });
    });
  }

  test('the file router is untouched by the refused calls and still answers', async () => {
    const answer = await gw.get('/v1/admin/routers/from-file');
    assert.deepEqual(answer.body.aliases, ['file-alias']);
    assert.equal((await chat(gw, 'file-alias', user.auth)).status, 200);
  });
});
