// The concurrency-one benchmark's client (bench/serial-client.ts) as bench/serial.ts drives it: a
// process of its own, one window per line on stdin, one result per line on stdout. Against a real
// server: the requests of a window are counted, errors are left out of the figures and reported,
// a server failing every request ends the window early, and a malformed window is refused.
import assert from 'node:assert/strict';
import { spawnOwned } from '../../support/owned-process.ts';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { test } from 'node:test';

const CLIENT = new URL('../../../bench/serial-client.ts', import.meta.url).pathname;

// Bounded: a client that stops answering fails the test instead of holding the suite.
test('the client measures each window on one connection and reports errors apart', { timeout: 30_000 }, async (t) => {
  let requests = 0;
  const sockets = new Set<unknown>();
  const server = createServer((request, response) => {
    sockets.add(request.socket);
    requests++;
    request.resume();
    request.on('end', () => {
      const failing = request.url === '/fail' || (request.url === '/some' && requests % 10 === 0);
      response.writeHead(failing ? 500 : 200, { 'content-type': 'application/json' });
      response.end(failing ? '{"error":"no"}' : '{"ok":true}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = spawnOwned(process.execPath, [CLIENT], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => {
    client.kill();
    server.close();
    server.closeAllConnections();
  });
  const lines = createInterface({ input: client.stdout })[Symbol.asyncIterator]();
  const ask = async (window: object) => {
    client.stdin.write(`${JSON.stringify(window)}\n`);
    const next = await lines.next();
    assert.equal(next.done, false, 'the client answered');
    return JSON.parse(next.value as string) as Record<string, number | string>;
  };
  const base = { origin, headers: { 'content-type': 'application/json' }, body: '{}', warmup: 5 };

  const ok = await ask({ ...base, path: '/ok', requests: 50 });
  assert.equal(ok.requests, 50);
  assert.equal(ok.errors, 0);
  assert.equal(requests, 55, 'the warm-up is sent and discarded');
  assert.ok((ok.p50Us as number) > 0 && (ok.p50Us as number) <= (ok.p99Us as number) && (ok.p99Us as number) <= (ok.maxUs as number));

  const some = await ask({ ...base, warmup: 0, path: '/some', requests: 100 });
  assert.equal(some.errors, 10);
  assert.equal(some.requests, 90, 'failed requests are not in the figures');
  assert.match(some.firstError as string, /^status 500/);

  const failing = await ask({ ...base, path: '/fail', requests: 1000 });
  assert.equal(failing.requests, 0);
  assert.equal(failing.errors, 20, 'a window of failures ends early');
  assert.equal(sockets.size, 1, 'every request went over one keep-alive connection');

  assert.match((await ask({ ...base, path: 'no-slash', requests: 1 })).error as string, /^bad window/);
  client.stdin.write('not json\n');
  assert.match(JSON.parse((await lines.next()).value as string).error, /^bad window/);
});
