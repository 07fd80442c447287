// Finding 12: connections are bounded in time and number. One with no request in flight is
// closed after --idle-timeout-seconds (before its first request and between two), but a request
// in flight, a slow stream included, is never cut by it. Past --max-connections, a reserve of
// connections answers the probes (/healthz) and refuses anything else with 503; past the
// reserve, new connections are closed as they are accepted. All on real sockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { HEALTH_RESERVE } from '../../../gateway/http/connection-limits.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { chatModel } from '../../support/gateway-config.ts';
import { sseEvents } from '../../support/gateway.ts';
import { SETTLE_MS } from '../../support/patience.ts';
import { testBed } from '../../support/test-bed.ts';
import { waitUntil } from './helpers.ts';

const bed = testBed();

/** An answer read off a raw socket: its status, headers and body (by Content-Length). */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Opens a connection to `url`'s host; resolves once it is connected. */
async function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await once(socket, 'connect');
  return socket;
}

/**
 * Sends one keep-alive request on `socket` and reads its answer; rejects when the connection
 * closes before a whole answer came (what a connection refused past the reserve sees).
 */
function ask(socket: Socket, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const fields: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(fields['content-length'] ?? 0);
      if (text.length - end - 4 < length) return;
      done();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers: fields, body: text.slice(end + 4, end + 4 + length) });
    };
    const onClose = () => {
      done();
      reject(new Error(`the connection closed before an answer (${JSON.stringify(text)})`));
    };
    const done = () => {
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.on('close', onClose);
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: gateway\r\n${head.join('')}\r\n`);
  });
}

/** Resolves true once `socket` is closed by the other side, false if it is still open after SETTLE_MS. */
async function closedByGateway(socket: Socket): Promise<boolean> {
  if (socket.closed) return true;
  const timeout = AbortSignal.timeout(SETTLE_MS);
  try {
    await once(socket, 'close', { signal: timeout });
    return true;
  } catch {
    return false;
  }
}

describe('idle connections', () => {
  let backend: FakeBackend;
  let url: string;
  let auth: Record<string, string>;

  before(async () => {
    backend = await startFakeOpenAI();
    const gw = await bed.gateway(
      { models: [chatModel('slow', [{ model: 'm', type: 'vllm', args: { api_url: backend.url } }])] },
      { settings: { idleTimeoutSeconds: 0.3 } },
    );
    url = gw.url;
    auth = gw.auth;
  });

  after(() => backend?.close());

  test('a connection that never sends a request is closed after the idle timeout', async () => {
    const socket = await open(url);
    try {
      assert.equal(await closedByGateway(socket), true, 'the gateway closed the idle connection');
    } finally {
      socket.destroy();
    }
  });

  test('a connection idle after its answer is closed after the idle timeout (keep-alive)', async () => {
    const socket = await open(url);
    try {
      const answer = await ask(socket, '/healthz');
      assert.equal(answer.status, 200);
      assert.notEqual(answer.headers.connection, 'close');
      assert.equal(await closedByGateway(socket), true, 'the gateway closed the connection kept alive');
    } finally {
      socket.destroy();
    }
  });

  test('a stream with pauses longer than the idle timeout is not cut', async () => {
    // Three words, 0.6 s apart (the idle timeout is 0.3 s); the headers also wait that long.
    backend.once({ text: 'one two three', delayMs: 600, chunkDelayMs: 600 });
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(response.status, 200);
    const events = sseEvents(await response.text());
    assert.equal(events.at(-1), '[DONE]');
    const text = events
      .filter((event) => typeof event === 'object' && event.choices?.length)
      .map((event) => event.choices[0].delta.content ?? '')
      .join('');
    assert.equal(text, 'one two three');
  });
});

describe('the cap on connections', () => {
  const MAX = 4;
  let url: string;
  let auth: Record<string, string>;
  const sockets: Socket[] = [];

  before(async () => {
    const gw = await bed.gateway({ models: [] }, { settings: { maxConnections: MAX, idleTimeoutSeconds: 600 } });
    url = gw.url;
    auth = gw.auth;
  });

  after(() => {
    for (const socket of sockets) socket.destroy();
  });

  test('past the cap, /healthz still answers and other requests get 503; past the reserve, connections are refused', async () => {
    // MAX connections kept alive, each known to be taken by the gateway (it answered on it).
    for (let i = 0; i < MAX; i++) {
      const socket = await open(url);
      sockets.push(socket);
      assert.equal((await ask(socket, '/v1/models', auth)).status, 200);
    }

    const refused = await open(url);
    sockets.push(refused);
    const answer = await ask(refused, '/v1/models', auth);
    assert.equal(answer.status, 503);
    assert.equal(JSON.parse(answer.body).error.code, 'too_many_connections');
    assert.equal(answer.headers.connection, 'close');
    assert.equal(await closedByGateway(refused), true, 'the refused connection is closed');

    for (const path of ['/healthz', '/readyz']) {
      const probe = await open(url);
      sockets.push(probe);
      const health = await ask(probe, path);
      assert.equal(health.status, 200, `${path} answers past the cap`);
      assert.equal(health.headers.connection, 'close');
    }

    // The reserve taken by connections that send nothing: the next one is closed unanswered.
    for (let i = 0; i < HEALTH_RESERVE; i++) sockets.push(await open(url));
    const dropped = await open(url);
    sockets.push(dropped);
    await assert.rejects(ask(dropped, '/healthz'), /closed before an answer/);

    // Once they go, requests are served again.
    for (const socket of sockets.splice(0)) socket.destroy();
    const served = await waitUntil(
      async () => {
        const socket = await open(url);
        try {
          return (await ask(socket, '/v1/models', auth)).status;
        } catch {
          return 0;
        } finally {
          socket.destroy();
        }
      },
      (status) => status === 200,
    );
    assert.equal(served, 200);
  });
});
