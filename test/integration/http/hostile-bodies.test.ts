// Bodies sent to hurt the gateway rather than to be served. Their values are counted as they
// arrive, so a body of millions of tiny values is refused before anything parses it (these took
// the event loop for seconds, for a caller with no budget left); a body that nests too deep is
// refused before it could overflow a stack; and a body that stops arriving, or trickles, is
// answered 408 and let go. Each refusal is in the envelope of the API called.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { assertError, send } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';

const bed = testBed();

const brokeKey = generateKey().secret;
const key = generateKey().secret;
const JSON_TYPE = { 'content-type': 'application/json' };

const CONFIG: GatewayConfig = {
  users: [
    { id: 'broke', name: 'Broke', budget: '0', keys: [{ name: 'k', key: '${BROKE}' }] },
    { id: 'dev', name: 'Dev', budget: '1000', keys: [{ name: 'k', key: '${KEY}' }] },
  ],
  models: [
    {
      id: 'chat',
      type: 'text-generation',
      costs: { prompt_tokens: 1, completion_tokens: 1 },
      providers: [{ model: 'sim', type: 'simulator' }],
    },
    { id: 'free-chat', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] },
    { id: 'embed', type: 'text-embeddings-inference', costs: { prompt_tokens: 1 }, providers: [{ model: 'sim', type: 'simulator' }] },
    { id: 'whisper', type: 'automatic-speech-recognition', providers: [{ model: 'sim', type: 'simulator' }] },
  ],
};

const broke = { authorization: `Bearer ${brokeKey}`, ...JSON_TYPE };
const dev = { authorization: `Bearer ${key}`, ...JSON_TYPE };

describe('bodies of too many values, with the default bounds', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await bed.gateway(CONFIG, { env: { BROKE: brokeKey, KEY: key } });
  });
  after(() => gw.close());

  const TOO_MANY = /^The request body holds more than 50000 JSON values/;

  test('embeddings of 1.2 million one-token arrays (4.8 MB) are 413, not parsed: not a 402 after seconds', async () => {
    const body = `{"model":"embed","input":[${'[1],'.repeat(1_200_000)}[1]]}`;
    assertError(await send(gw, 'POST', '/v1/embeddings', body, broke), { status: 413, code: 'request_too_large', message: TOO_MANY });
  });

  test('a token array of 4.9 million integers is 413', async () => {
    const body = `{"model":"embed","input":[${'1,'.repeat(4_900_000)}1]}`;
    assertError(await send(gw, 'POST', '/v1/embeddings', body, broke), { status: 413, code: 'request_too_large', message: TOO_MANY });
  });

  test('500,000 unknown fields of a chat request are 413 (members of one object)', async () => {
    const fields = Array.from({ length: 500_000 }, (_, i) => `"f${i}":0`).join(',');
    const body = `{"model":"chat","messages":[{"role":"user","content":"hi"}],${fields}}`;
    assertError(await send(gw, 'POST', '/v1/chat/completions', body, broke), {
      status: 413,
      code: 'request_too_large',
      message: 'An object in the request body has more than 1024 members',
    });
  });

  test('400,000 empty text parts are 413', async () => {
    const body = `{"model":"chat","messages":[{"role":"user","content":[${'{"type":"text","text":""},'.repeat(399_999)}{"type":"text","text":""}]}]}`;
    assertError(await send(gw, 'POST', '/v1/chat/completions', body, broke), { status: 413, code: 'request_too_large', message: TOO_MANY });
  });

  test("Messages with 300,000 text blocks are 413, in Anthropic's envelope", async () => {
    const blocks = `${'{"type":"text","text":"x"},'.repeat(299_999)}{"type":"text","text":"x"}`;
    const body = `{"model":"chat","max_tokens":5,"messages":[{"role":"user","content":[${blocks}]}]}`;
    const answer = await send(gw, 'POST', '/v1/messages', body, broke);
    assert.equal(answer.status, 413);
    const error = JSON.parse(answer.text);
    assert.equal(error.type, 'error');
    assert.equal(error.error.type, 'request_too_large');
    assert.match(error.error.message, TOO_MANY);
  });

  test('arrays nested 5,000 deep (10 KB) are 400 before anything parses or serialises them', async () => {
    const body = `{"model":"chat","messages":[{"role":"user","content":"hi"}],"tools":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    assertError(await send(gw, 'POST', '/v1/chat/completions', body, dev), {
      status: 400,
      code: 'invalid_request',
      message: 'The request body nests arrays and objects more than 128 deep',
    });
  });

  test('a __proto__ key written with escapes is refused as the plain one is', async () => {
    const body = '{"model":"chat","\\u005f_proto__":{"admin":true},"messages":[{"role":"user","content":"hi"}]}';
    assertError(await send(gw, 'POST', '/v1/chat/completions', body, dev), {
      status: 400,
      code: 'invalid_json',
      message: /key that is refused/,
    });
  });

  test('a large body (parsed in a worker thread) that breaks, or uses a refused key, is refused as a small one is', async () => {
    const long = 'y'.repeat(2_000_000);
    const broken = `{"model":"free-chat","messages":[{"role":"user","content":"${long}"}]`;
    assertError(await send(gw, 'POST', '/v1/chat/completions', broken, dev), {
      status: 400,
      code: 'invalid_json',
      message: /^The request body is not valid JSON: /,
    });
    const poisoned = `{"model":"free-chat","__proto__":{"admin":true},"messages":[{"role":"user","content":"${long}"}]}`;
    assertError(await send(gw, 'POST', '/v1/chat/completions', poisoned, dev), {
      status: 400,
      code: 'invalid_json',
      message: /key that is refused/,
    });
  });

  test('what is inside strings is not counted: a 5 MB prompt of commas and brackets is served', async () => {
    const prompt = '[{,}],'.repeat(800_000);
    const body = JSON.stringify({ model: 'free-chat', max_tokens: 3, messages: [{ role: 'user', content: prompt }] });
    const answer = await send(gw, 'POST', '/v1/chat/completions', body, dev);
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    assert.equal(JSON.parse(answer.text).usage.completion_tokens, 3);
  });

  test('a body within the bounds is served: 40,000 token ids to embed', async () => {
    const body = JSON.stringify({ model: 'embed', input: Array.from({ length: 40_000 }, (_, i) => i % 1000) });
    const answer = await send(gw, 'POST', '/v1/embeddings', body, dev);
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    assert.equal(JSON.parse(answer.text).usage.prompt_tokens, 40_000);
  });
});

/** A socket that sends a request's head and the first part of its body, then what the test says; the answer when the server has closed. */
function openRequest(gw: TestGateway, path: string, headers: Record<string, string>, first: string) {
  const { hostname, port } = new URL(gw.url);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  const closed = new Promise<{ status: number; body: string; headers: string }>((resolve) =>
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      resolve({ status: Number(text.split(' ')[1]), headers: text.slice(0, end).toLowerCase(), body: text.slice(end + 4) });
    }),
  );
  const head = Object.entries({ host: `${hostname}:${port}`, ...headers })
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n\r\n${first}`);
  return { socket, closed };
}

describe('bodies that do not arrive in time', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await bed.gateway(CONFIG, { env: { BROKE: brokeKey, KEY: key }, settings: { bodyIdleSeconds: 0.3, bodyTimeoutSeconds: 2 } });
  });
  after(() => gw.close());

  test('a JSON body that stops half-way is answered 408 once it has been idle, and the connection closed', async () => {
    const body = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Hello' }] });
    const { closed } = openRequest(gw, '/v1/chat/completions', { ...dev, 'content-length': String(body.length) }, body.slice(0, 20));
    const answer = await closed;
    assert.equal(answer.status, 408);
    assert.match(answer.headers, /\r\nconnection: close/);
    assert.deepEqual(JSON.parse(answer.body), {
      error: {
        message: 'The request body stopped arriving: nothing came for 0.3 s',
        type: 'invalid_request_error',
        param: null,
        code: 'request_timeout',
      },
    });
  });

  test("the same on /v1/messages, in Anthropic's envelope", async () => {
    const { closed } = openRequest(gw, '/v1/messages', { ...dev, 'content-length': '500' }, '{"model":"chat",');
    const answer = await closed;
    assert.equal(answer.status, 408);
    assert.deepEqual(JSON.parse(answer.body), {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'The request body stopped arriving: nothing came for 0.3 s' },
    });
  });

  test('a body that trickles a byte at a time is answered 408 at the total bound', async () => {
    const { socket, closed } = openRequest(gw, '/v1/chat/completions', { ...dev, 'content-length': '100000' }, '{');
    const trickle = setInterval(() => socket.writable && socket.write(' '), 100);
    const answer = await closed.finally(() => clearInterval(trickle));
    assert.equal(answer.status, 408);
    assert.equal(JSON.parse(answer.body).error.message, 'The request body did not arrive within 2 s');
  });

  test('a transcription upload that stalls is answered 408, and what was read let go', async () => {
    const boundary = 'stall';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF`;
    const { closed } = openRequest(
      gw,
      '/v1/audio/transcriptions',
      { authorization: dev.authorization, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '1000000' },
      head,
    );
    const answer = await closed;
    assert.equal(answer.status, 408);
    assert.equal(JSON.parse(answer.body).error.code, 'request_timeout');
  });

  test('the gateway serves on, and a body sent whole is never timed out', async () => {
    const answer = await send(
      gw,
      'POST',
      '/v1/chat/completions',
      JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
      dev,
    );
    assert.equal(answer.status, 200);
  });
});

describe('arrays of 150,000 items, with the value bound raised to let them in', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await bed.gateway(CONFIG, { env: { BROKE: brokeKey, KEY: key }, settings: { maxJsonValues: 1_000_000 } });
  });
  after(() => gw.close());

  // Spread as a function's arguments, 150,000 items overflowed the call stack: a 500.
  test('Responses with 150,000 input items is answered, not a 500', async () => {
    const body = JSON.stringify({
      model: 'free-chat',
      store: false,
      max_output_tokens: 3,
      input: Array.from({ length: 150_000 }, () => ({ role: 'user', content: 'x' })),
    });
    const answer = await send(gw, 'POST', '/v1/responses', body, dev);
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
  });

  test('Messages with 150,000 tool results is answered, not a 500', async () => {
    const blocks = Array.from({ length: 150_000 }, (_, i) => ({ type: 'tool_result', tool_use_id: `t${i}`, content: 'ok' }));
    const body = JSON.stringify({ model: 'free-chat', max_tokens: 3, messages: [{ role: 'user', content: blocks }] });
    const answer = await send(gw, 'POST', '/v1/messages', body, dev);
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
  });
});
