// What `tollgate gateway` prints when it cannot start for a reason the operator can fix: one
// line on stderr that says what is wrong and how to fix it, a non-zero exit, no stack trace, and
// no secret (a Redis password) in the line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnOwned } from '../../support/owned-process.ts';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { PROCESS_START_MS } from '../../support/patience.ts';

const CLI = new URL('../../../bin/tollgate.ts', import.meta.url).pathname;

/** Runs the gateway until it exits (it must, here) and returns its exit code and stderr. */
async function failedStart(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawnOwned(process.execPath, [CLI, 'gateway', '--log-level', 'silent', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), PROCESS_START_MS);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code, stderr };
}

function assertOneLine(result: { code: number | null; stderr: string }, expected: RegExp, exitCode = 1): void {
  assert.equal(result.code, exitCode, `exit code (stderr: ${result.stderr})`);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line, got:\n${result.stderr}`);
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack frames');
  assert.match(lines[0]!, expected);
}

async function listening(): Promise<Server> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

async function closedPort(): Promise<number> {
  const server = await listening();
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

test('an admin key too short', async () => {
  assertOneLine(
    await failedStart(['--port', '0', '--admin-key', 'tg-short']),
    /^tollgate gateway: --admin-key \(TOLLGATE_ADMIN_KEY\) must start with "tg-" and have at least 32 characters after it/,
  );
});

test('a port in use', async () => {
  const server = await listening();
  const { port } = server.address() as { port: number };
  try {
    assertOneLine(
      await failedStart(['--host', '127.0.0.1', '--port', String(port)]),
      new RegExp(`^tollgate gateway: cannot listen on 127\\.0\\.0\\.1:${port}: the port is already in use`),
    );
  } finally {
    server.close();
  }
});

test('a --host that does not resolve', async () => {
  assertOneLine(
    await failedStart(['--host', 'no-such-host.invalid', '--port', '0']),
    /^tollgate gateway: cannot listen on no-such-host\.invalid:0: the host name "no-such-host\.invalid" does not resolve/,
  );
});

test('Redis out of reach at start-up, without printing its password', async () => {
  const port = await closedPort();
  const result = await failedStart(['--port', '0', '--redis-url', `redis://someone:hunter2@127.0.0.1:${port}`]);
  assertOneLine(result, new RegExp(`^tollgate gateway: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}.*ECONNREFUSED`));
  assert.doesNotMatch(result.stderr, /hunter2/);
});

test('a config file whose YAML alias refers to itself', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-cli-'));
  try {
    const file = join(dir, 'config.yaml');
    await writeFile(file, 'models: &m [*m]\n');
    const result = await failedStart(['--port', '0', '--config', file, '--admin-key', generateKey().secret]);
    assert.equal(result.code, 2, result.stderr);
    assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack frames');
    assert.match(result.stderr, /has an alias \(\*name\) inside the node it refers to/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
