// What a caller gets when the request cannot be served: the two errors of spec section 7 on
// every inference endpoint, and for any malformed request a 4xx in OpenAI's error envelope whose
// message says what is wrong (never a 500, never a stack trace).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError, JSON_HEADERS, postJson, send } from './helpers.ts';
import { rawRequest } from './raw-http.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

const CONFIG: GatewayConfig = {
  models: [
    { id: 'chat-router', type: 'text-generation', aliases: ['chat-alias'], providers: [{ model: 'sim-llm', type: 'simulator' }] },
    { id: 'vision-router', type: 'image-text-to-text', aliases: ['vision-alias'], providers: [{ model: 'sim-vlm', type: 'simulator' }] },
    {
      id: 'embed-router',
      type: 'text-embeddings-inference',
      aliases: ['embed-alias'],
      providers: [{ model: 'sim-embed', type: 'simulator' }],
    },
    {
      id: 'rerank-router',
      type: 'text-classification',
      aliases: ['rerank-alias'],
      providers: [{ model: 'sim-rerank', type: 'simulator' }],
    },
  ],
};

/** A valid body for each inference endpoint, without its `model`. */
const ENDPOINTS = {
  '/v1/chat/completions': { messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 },
  '/v1/completions': { prompt: 'Once upon a time', max_tokens: 4 },
  '/v1/embeddings': { input: 'Hello' },
  '/v1/rerank': { query: 'gateway', documents: ['a gateway routes requests', 'a cat sleeps'] },
} as const;
type Path = keyof typeof ENDPOINTS;
const PATHS = Object.keys(ENDPOINTS) as Path[];

const CHAT = '/v1/chat/completions';
const USER = [{ role: 'user', content: 'Hello' }];

let gw: TestGateway;

before(async () => {
  gw = await bed.gateway(CONFIG);
});

describe('spec 7: a model name that matches no router id or alias is 404 "Model not found"', () => {
  for (const path of PATHS) {
    test(`POST ${path} with an unknown model`, async () => {
      const answer = await postJson(gw, path, { ...ENDPOINTS[path], model: 'no-such-model' });
      assertError(answer, { status: 404, code: 'model_not_found', message: 'Model not found', param: 'model' });
      assert.deepEqual(JSON.parse(answer.text), {
        error: { message: 'Model not found', type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
      });
    });
  }

  test('a provider-side model name is not a router name', async () => {
    const answer = await postJson(gw, CHAT, { ...ENDPOINTS[CHAT], model: 'sim-llm' });
    assertError(answer, { status: 404, code: 'model_not_found', message: 'Model not found', param: 'model' });
  });
});

describe('spec 7: a router whose type does not fit the endpoint is 400 "Wrong model type"', () => {
  const mismatches: { path: Path; model: string; why: string }[] = [
    { path: '/v1/chat/completions', model: 'embed-router', why: 'chat on an embeddings router' },
    { path: '/v1/chat/completions', model: 'rerank-router', why: 'chat on a reranking router' },
    { path: '/v1/completions', model: 'vision-router', why: 'legacy completions on an image-text-to-text router' },
    { path: '/v1/completions', model: 'embed-router', why: 'legacy completions on an embeddings router' },
    { path: '/v1/embeddings', model: 'chat-router', why: 'embeddings on a chat router' },
    { path: '/v1/embeddings', model: 'rerank-router', why: 'embeddings on a reranking router' },
    { path: '/v1/rerank', model: 'chat-router', why: 'rerank on a chat router' },
    { path: '/v1/rerank', model: 'embed-router', why: 'rerank on an embeddings router' },
    { path: '/v1/embeddings', model: 'chat-alias', why: 'embeddings on a chat router called by its alias' },
  ];
  for (const { path, model, why } of mismatches) {
    test(`${why} (POST ${path}, model ${model})`, async () => {
      const answer = await postJson(gw, path, { ...ENDPOINTS[path], model });
      assertError(answer, { status: 400, code: 'wrong_model_type', message: 'Wrong model type', param: 'model' });
    });
  }
});

describe('a router is called by its id or any alias, and answers as its id', () => {
  const matches: { path: Path; alias: string; id: string }[] = [
    { path: '/v1/chat/completions', alias: 'chat-alias', id: 'chat-router' },
    { path: '/v1/chat/completions', alias: 'vision-alias', id: 'vision-router' },
    { path: '/v1/completions', alias: 'chat-alias', id: 'chat-router' },
    { path: '/v1/embeddings', alias: 'embed-alias', id: 'embed-router' },
    { path: '/v1/rerank', alias: 'rerank-alias', id: 'rerank-router' },
  ];
  for (const { path, alias, id } of matches) {
    test(`POST ${path} with alias ${alias} answers 200 with model ${id}`, async () => {
      const answer = await gw.post(path, { ...ENDPOINTS[path], model: alias });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.model, id);
    });
  }
});

describe('malformed requests are 4xx errors in the envelope, with a message that says what is wrong', () => {
  const chat = (extra: Record<string, unknown>) => JSON.stringify({ model: 'chat-router', messages: USER, ...extra });
  const cases: { name: string; path?: Path; body: string; status?: number; code: string; message: RegExp; param: string | null }[] = [
    {
      name: 'malformed JSON',
      body: '{"model": "chat-router", "messages": [',
      code: 'invalid_json',
      message: /not valid JSON/,
      param: null,
    },
    {
      name: 'JSON with a trailing comma',
      body: chat({}).replace(/}$/, ',}'),
      code: 'invalid_json',
      message: /not valid JSON: .*position \d+/,
      param: null,
    },
    {
      name: 'valid JSON with a __proto__ key',
      body: '{"model": "chat-router", "__proto__": {"admin": true}, "messages": []}',
      code: 'invalid_json',
      message: /key that is refused: "__proto__"/,
      param: null,
    },
    {
      name: 'valid JSON with constructor.prototype',
      body: '{"model": "chat-router", "constructor": {"prototype": {"admin": true}}, "messages": []}',
      code: 'invalid_json',
      message: /key that is refused/,
      param: null,
    },
    { name: 'an empty body', body: '', code: 'invalid_request', message: /body is empty/, param: null },
    { name: 'a JSON array', body: '[{"model": "chat-router"}]', code: 'invalid_request', message: /must be a JSON object/, param: null },
    { name: 'a JSON string', body: '"hello"', code: 'invalid_request', message: /must be a JSON object/, param: null },
    { name: 'a JSON number', body: '42', code: 'invalid_request', message: /must be a JSON object/, param: null },
    { name: 'JSON null', body: 'null', code: 'invalid_request', message: /must be a JSON object/, param: null },
    { name: 'no model', body: JSON.stringify({ messages: USER }), code: 'invalid_request', message: /model/, param: 'model' },
    { name: 'a model that is a number', body: chat({ model: 42 }), code: 'invalid_request', message: /model/, param: 'model' },
    { name: 'a model that is an empty string', body: chat({ model: '' }), code: 'invalid_request', message: /model/, param: 'model' },
    {
      name: 'no messages',
      body: JSON.stringify({ model: 'chat-router' }),
      code: 'invalid_request',
      message: /messages/,
      param: 'messages',
    },
    {
      name: 'messages that are an object',
      body: chat({ messages: { role: 'user', content: 'Hello' } }),
      code: 'invalid_request',
      message: /messages: .*expected array/,
      param: 'messages',
    },
    {
      name: 'an empty messages array',
      body: chat({ messages: [] }),
      code: 'invalid_request',
      message: /messages: must hold at least one message/,
      param: 'messages',
    },
    {
      name: 'a message that is null',
      body: chat({ messages: [null] }),
      code: 'invalid_request',
      message: /messages\[0\]/,
      param: 'messages[0]',
    },
    {
      name: 'a message with an unknown role',
      body: chat({ messages: [{ role: 'robot', content: 'Hi' }] }),
      code: 'invalid_request',
      message: /messages\[0\]\.role: .*"user"/,
      param: 'messages[0].role',
    },
    {
      name: 'a second message without a role',
      body: chat({ messages: [...USER, { content: 'Hi' }] }),
      code: 'invalid_request',
      message: /messages\[1\]\.role/,
      param: 'messages[1].role',
    },
    {
      name: 'message content that is a number',
      body: chat({ messages: [{ role: 'user', content: 5 }] }),
      code: 'invalid_request',
      message: /messages\[0\]\.content/,
      param: 'messages[0].content',
    },
    {
      name: 'a negative max_tokens',
      body: chat({ max_tokens: -1 }),
      code: 'invalid_request',
      message: /max_tokens: .*>=1/,
      param: 'max_tokens',
    },
    {
      name: 'max_tokens as a string',
      body: chat({ max_tokens: '10' }),
      code: 'invalid_request',
      message: /max_tokens: .*expected number/,
      param: 'max_tokens',
    },
    {
      name: 'a fractional max_tokens',
      body: chat({ max_tokens: 1.5 }),
      code: 'invalid_request',
      message: /max_tokens: .*int/,
      param: 'max_tokens',
    },
    {
      name: 'stream that is not a boolean',
      body: chat({ stream: 'yes' }),
      code: 'invalid_request',
      message: /stream: .*expected boolean/,
      param: 'stream',
    },
    {
      name: 'stream_options.include_usage that is not a boolean',
      body: chat({ stream_options: { include_usage: 'yes' } }),
      code: 'invalid_request',
      message: /stream_options\.include_usage/,
      param: 'stream_options.include_usage',
    },
    {
      name: 'completions without a prompt',
      path: '/v1/completions',
      body: JSON.stringify({ model: 'chat-router' }),
      code: 'invalid_request',
      message: /prompt/,
      param: 'prompt',
    },
    {
      name: 'completions with an empty prompt list',
      path: '/v1/completions',
      body: JSON.stringify({ model: 'chat-router', prompt: [] }),
      code: 'invalid_request',
      message: /prompt/,
      param: 'prompt',
    },
    {
      name: 'embeddings with a number as input',
      path: '/v1/embeddings',
      body: JSON.stringify({ model: 'embed-router', input: 5 }),
      code: 'invalid_request',
      message: /input/,
      param: 'input',
    },
    {
      name: 'embeddings with zero dimensions',
      path: '/v1/embeddings',
      body: JSON.stringify({ model: 'embed-router', input: 'x', dimensions: 0 }),
      code: 'invalid_request',
      message: /dimensions: .*>=1/,
      param: 'dimensions',
    },
    {
      name: 'rerank with an empty query',
      path: '/v1/rerank',
      body: JSON.stringify({ model: 'rerank-router', query: '', documents: ['a'] }),
      code: 'invalid_request',
      message: /query: must not be empty/,
      param: 'query',
    },
    {
      name: 'rerank without documents',
      path: '/v1/rerank',
      body: JSON.stringify({ model: 'rerank-router', query: 'q', documents: [] }),
      code: 'invalid_request',
      message: /documents: must hold at least one document/,
      param: 'documents',
    },
    {
      name: 'rerank with a document that is a number',
      path: '/v1/rerank',
      body: JSON.stringify({ model: 'rerank-router', query: 'q', documents: ['a', 5] }),
      code: 'invalid_request',
      message: /documents\[1\]/,
      param: 'documents[1]',
    },
  ];
  for (const c of cases) {
    test(`${c.name} -> ${c.status ?? 400}${c.param ? `, param ${c.param}` : ''}`, async () => {
      const answer = await send(gw, 'POST', c.path ?? CHAT, c.body, JSON_HEADERS);
      assertError(answer, { status: c.status ?? 400, code: c.code, message: c.message, param: c.param });
    });
  }
});

describe('the Content-Type must be JSON: anything else is 415', () => {
  const body = JSON.stringify({ model: 'chat-router', messages: USER });
  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
    test(`Content-Type ${contentType} -> 415 naming the type received`, async () => {
      const answer = await send(gw, 'POST', CHAT, body, { 'content-type': contentType });
      assertError(answer, {
        status: 415,
        code: 'unsupported_media_type',
        message: /Content-Type must be application\/json/,
        param: null,
      });
      assert.match(JSON.parse(answer.text).error.message, new RegExp(`got ${contentType.split(';')[0]!.replace('+', '\\+')}`));
    });
  }

  test('a body sent without any Content-Type -> 415', async () => {
    const answer = await send(gw, 'POST', CHAT, new TextEncoder().encode(body));
    assertError(answer, {
      status: 415,
      code: 'unsupported_media_type',
      message: /Content-Type must be application\/json/,
      param: null,
    });
  });

  test('application/json with a charset parameter is accepted', async () => {
    const answer = await send(gw, 'POST', CHAT, body, { 'content-type': 'application/json; charset=utf-8' });
    assert.equal(answer.status, 200, answer.text);
  });
});

describe('unknown URLs and methods are 404 in the envelope, naming what was asked', () => {
  const cases: { method: string; path: string; named: string }[] = [
    { method: 'GET', path: '/v1/nothing-here', named: 'GET /v1/nothing-here' },
    { method: 'POST', path: '/v1/chat/completion', named: 'POST /v1/chat/completion' },
    { method: 'POST', path: '/chat/completions', named: 'POST /chat/completions' },
    { method: 'GET', path: '/v1/chat/completions', named: 'GET /v1/chat/completions' },
    { method: 'GET', path: '/v1/embeddings', named: 'GET /v1/embeddings' },
    { method: 'DELETE', path: '/v1/models', named: 'DELETE /v1/models' },
  ];
  for (const { method, path, named } of cases) {
    test(`${method} ${path}`, async () => {
      const answer = await send(gw, method, path, method === 'POST' ? '{}' : undefined, method === 'POST' ? JSON_HEADERS : {});
      assertError(answer, { status: 404, code: 'unknown_url', message: `Unknown request URL: ${named}`, param: null });
    });
  }

  test('the query string of an unknown URL is not echoed back (it may carry secrets)', async () => {
    const answer = await send(gw, 'GET', '/v1/nothing-here?api_key=sk-should-not-echo');
    assertError(answer, { status: 404, code: 'unknown_url', message: 'Unknown request URL: GET /v1/nothing-here', param: null });
    assert.doesNotMatch(answer.text, /sk-should-not-echo/);
  });
});

describe('a request without a body may say Content-Type: application/json (many clients always do)', () => {
  test('DELETE of a known route with that header and no body is served, not refused as an empty body', async () => {
    const user = JSON.parse((await send(gw, 'POST', '/v1/admin/users', JSON.stringify({ name: 'Doomed' }), JSON_HEADERS)).text);
    const answer = await send(gw, 'DELETE', `/v1/admin/users/${user.id}`, undefined, JSON_HEADERS);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(JSON.parse(answer.text).deleted, true);
  });

  test('GET with that header and no body is served', async () => {
    const answer = await send(gw, 'GET', '/v1/models', undefined, JSON_HEADERS);
    assert.equal(answer.status, 200, answer.text);
  });

  test('POST with that header and no body is still told its body is empty', async () => {
    const answer = await send(gw, 'POST', CHAT, undefined, JSON_HEADERS);
    assertError(answer, { status: 400, code: 'invalid_request', message: /body is empty/, param: null });
  });
});

describe('an unknown URL is 404 whatever its body and Content-Type', () => {
  const cases = [
    { name: 'DELETE, application/json, no body', method: 'DELETE', path: '/v1/nothing-here', body: undefined, headers: JSON_HEADERS },
    { name: 'POST, application/json, not JSON', method: 'POST', path: '/v1/nothing-here', body: '{not json', headers: JSON_HEADERS },
    { name: 'POST, text/plain', method: 'POST', path: '/v1/nothing-here', body: 'hello', headers: { 'content-type': 'text/plain' } },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const answer = await send(gw, c.method, c.path, c.body, c.headers);
      assertError(answer, { status: 404, code: 'unknown_url', message: `Unknown request URL: ${c.method} ${c.path}`, param: null });
    });
  }
});

describe("what Fastify or Node answer before any route runs is in the API's envelope", () => {
  test('a malformed percent-encoding in the path -> 400 invalid_url', async () => {
    for (const path of ['/v1/models/%E0%A4%A', '/v1/admin/users/%zz']) {
      const answer = await send(gw, 'GET', path);
      assertError(answer, { status: 400, code: 'invalid_url', message: /percent-encoding/, param: null });
    }
  });

  test('headers larger than the server accepts -> 431 headers_too_large', async () => {
    const host = new URL(gw.url).host;
    const answer = await rawRequest(gw.url, `GET /v1/models HTTP/1.1\r\nHost: ${host}\r\nX-Padding: ${'a'.repeat(20 * 1024)}`);
    assertError(
      { status: answer.status, headers: new Headers(answer.headers), text: answer.body },
      { status: 431, code: 'headers_too_large', message: /headers are larger/, param: null },
    );
  });

  test('bytes that are not HTTP -> 400 malformed_request', async () => {
    const answer = await rawRequest(gw.url, 'NOT HTTP AT ALL');
    assertError(
      { status: answer.status, headers: new Headers(answer.headers), text: answer.body },
      { status: 400, code: 'malformed_request', message: /not valid HTTP/, param: null },
    );
  });
});

describe('the body size limit', () => {
  let small: TestGateway;
  before(async () => {
    small = await bed.gateway(CONFIG, { settings: { bodyLimit: 2048 } });
  });
  after(() => small.close());

  const bodyOfSize = (bytes: number) => {
    const skeleton = JSON.stringify({ model: 'chat-router', messages: [{ role: 'user', content: '' }], max_tokens: 4 });
    const text = JSON.stringify({
      model: 'chat-router',
      messages: [{ role: 'user', content: 'x'.repeat(bytes - skeleton.length) }],
      max_tokens: 4,
    });
    assert.equal(Buffer.byteLength(text), bytes);
    return text;
  };

  test('a body over the configured limit -> 413 naming the limit', async () => {
    const answer = await send(small, 'POST', CHAT, bodyOfSize(2049), JSON_HEADERS);
    assertError(answer, { status: 413, code: 'request_too_large', message: /larger than the limit of 2048 bytes/, param: null });
  });

  test('a body of exactly the limit is served', async () => {
    const answer = await send(small, 'POST', CHAT, bodyOfSize(2048), JSON_HEADERS);
    assert.equal(answer.status, 200, answer.text);
  });
});
