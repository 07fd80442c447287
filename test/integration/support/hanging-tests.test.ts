// The test run cannot hang, and leaves nothing running: `npm test` bounds every test and hook
// (--test-timeout) and ends each file's process once its tests are done (--test-force-exit), and
// every server the harness starts is owned by the file's process, so a set-up that fails or hangs
// half-way, as a Redis Cluster whose nodes did not all come up once did, becomes a failure with a
// message and stops what it had started.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually } from '../../support/eventually.ts';
import { PROCESS_START_MS, SETTLE_MS } from '../../support/patience.ts';
import { startRedis, startRedisServers } from '../../support/redis-server.ts';

const ROOT = new URL('../../../', import.meta.url);
const REDIS_SERVER = new URL('test/support/redis-server.ts', ROOT).href;

/** The flags `npm test` gives node's test runner. */
function testRunnerFlags(): string[] {
  const packageJson = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string> };
  return packageJson.scripts.test!.match(/--test-[a-z-]+(=\S+)?/g) ?? [];
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const scratch = await mkdtemp(join(tmpdir(), 'tollgate-hanging-'));
after(() => rm(scratch, { recursive: true, force: true }));

test('npm test bounds every test and hook, and ends a file whose tests are done', () => {
  const flags = testRunnerFlags();
  assert.ok(
    flags.some((flag) => /^--test-timeout=\d+$/.test(flag)),
    `npm test gives no --test-timeout: ${flags.join(' ')}`,
  );
  assert.ok(flags.includes('--test-force-exit'), `npm test gives no --test-force-exit: ${flags.join(' ')}`);
});

test('a set-up that hangs after starting a Redis fails by itself, and the Redis is stopped', async () => {
  const portFile = join(scratch, 'port');
  const fixture = join(scratch, 'hangs.test.ts');
  await writeFile(
    fixture,
    `import { writeFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { startRedis } from ${JSON.stringify(REDIS_SERVER)};
before(async () => {
  const redis = await startRedis();
  writeFileSync(${JSON.stringify(portFile)}, String(redis.port));
  await new Promise(() => {}); // never ends, as a cluster waiting on nodes that never came up
});
test('never reached', () => {});
`,
  );
  // npm test's own flags, with a bound short enough for this test (a later flag wins).
  const flags = [...testRunnerFlags(), '--test-timeout=5000'];
  const run = await new Promise<{ code: number | null; output: string }>((resolve) => {
    // A run of its own, as npm test's: not a child of this file's run (NODE_TEST_CONTEXT).
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_TEST_CONTEXT'));
    execFile(process.execPath, ['--test', ...flags, fixture], { timeout: PROCESS_START_MS, env }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, output: stdout + stderr }),
    );
  });
  assert.notEqual(run.code, 0, run.output);
  assert.match(run.output, /timed out after 5000ms/);
  const port = Number(await readFile(portFile, 'utf8'));
  await eventually(async () => !(await answers(port)), `the hung file's Redis on port ${port} stopped`, { timeoutMs: SETTLE_MS });
});

test('servers started together are all stopped when one of them fails to start', async () => {
  const ports: number[] = [];
  await assert.rejects(
    startRedisServers(4, async (index) => {
      if (index === 3) throw new Error('this node did not come up');
      const redis = await startRedis({ clusterBus: true });
      ports.push(redis.port);
      return redis;
    }),
    /this node did not come up/,
  );
  assert.equal(ports.length, 3);
  for (const port of ports) assert.equal(await answers(port), false, `the Redis on port ${port} still runs`);
});
