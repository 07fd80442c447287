// While the gateway drains (SIGTERM), a request that still arrives on an open connection gets a
// 503 in OpenAI's error envelope, like every other error, and the one in flight finishes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { waitUntil } from './helpers.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed();

const ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

test('a request arriving while the gateway drains gets 503 shutting_down in the envelope; the one in flight is answered', async () => {
  // A backend that holds its answer until told: the first request stays in flight meanwhile.
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  const { promise: arrived, resolve: arrive } = Promise.withResolvers<void>();
  const backend = createServer(async (request, response) => {
    // The gateway reads a vllm provider's engine load there: not a request under test.
    if (request.url === '/metrics') return void response.writeHead(404).end();
    request.resume();
    arrive();
    await released;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(ANSWER));
  });
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
  const gw = await bed.gateway({
    models: [{ id: 'chat', type: 'text-generation', providers: [{ model: 'm', type: 'vllm', args: { api_url: backendUrl } }] }],
  });
  try {
    const { port } = new URL(gw.url);
    const socket = connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    const body = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Hello' }] });
    const post = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.adminKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    socket.write(post);
    await arrived;

    const closed = gw.close();
    // The gateway stops listening once its drain has begun; the connection in use stays open.
    await waitUntil(
      () => gw.app.server.listening,
      (listening) => !listening,
    );
    socket.write(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.adminKey}\r\n\r\n`);
    release();
    await once(socket, 'close');
    await closed;

    const text = Buffer.concat(received).toString('utf8');
    const [first = '', second = ''] = text.split(/(?=HTTP\/1\.1 )/);
    assert.match(first, /^HTTP\/1\.1 200 /);
    assert.match(second, /^HTTP\/1\.1 503 /);
    assert.match(second, /\r\nconnection: close\r\n/i);
    const envelope = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(envelope, {
      error: {
        message: 'The gateway is shutting down; send the request again (to another gateway)',
        type: 'server_error',
        param: null,
        code: 'shutting_down',
      },
    });
  } finally {
    release();
    await gw.close().catch(() => {});
    backend.close();
  }
});
