// Every process that opens the store refuses to start on a Redis holding a layout this build does
// not read (core/store/redis/layout-check.ts): `tollgate gateway`, `tollgate router-worker` and
// `tollgate operator` each print one line that names the layout found, the ones this build reads
// and what to do, and exit 1, without a stack trace, before writing anything to Redis.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { failedStart } from '../../support/gateway-process.ts';
import { LAYOUT_VERSION, LAYOUT_VERSION_KEY } from '../../../core/store/redis/layout.ts';
import { useRedis } from '../../support/use-redis.ts';

const NEWER = String(LAYOUT_VERSION + 1);
const REFUSAL = `holds Tollgate layout ${NEWER}; this build reads layout ${LAYOUT_VERSION}: upgrade this process, or point it at another Redis`;

const redis = useRedis();
let dir: string;
before(async () => {
  await redis.ready();
  await redis.admin.set(LAYOUT_VERSION_KEY, NEWER);
  dir = await mkdtemp(join(tmpdir(), 'tollgate-layout-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function assertRefused(args: string[], line: string): Promise<void> {
  const result = await failedStart(args);
  assert.equal(result.code, 1, `exit code (stderr: ${result.stderr})`);
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack frames');
  assert.deepEqual(result.stderr.trimEnd().split('\n'), [line]);
  assert.deepEqual(await redis.admin.keys('*'), [LAYOUT_VERSION_KEY], 'nothing written to Redis');
  assert.equal(await redis.admin.get(LAYOUT_VERSION_KEY), NEWER);
}

test('the gateway refuses a Redis holding a newer layout', async () => {
  await assertRefused(
    ['gateway', '--host', '127.0.0.1', '--port', '0', '--redis-url', redis.url],
    `tollgate gateway: Redis at ${redis.url} ${REFUSAL}`,
  );
});

test('router workers refuse it', async () => {
  await assertRefused(
    ['router-worker', '--host', '127.0.0.1', '--port', '0', '--redis-url', redis.url],
    `tollgate router-worker: Redis at ${redis.url} ${REFUSAL}`,
  );
});

test('the operator refuses it, before it watches anything', async () => {
  // An API server nobody listens on: the operator stops at Redis, before its first request.
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'none', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'none', user: { token: 'unused' } }],
      contexts: [{ name: 'none', context: { cluster: 'none', user: 'none' } }],
      'current-context': 'none',
    }),
  );
  await assertRefused(
    [
      'operator',
      '--namespace',
      'tollgate',
      '--kubeconfig',
      kubeconfig,
      '--health-host',
      '127.0.0.1',
      '--health-port',
      '0',
      '--redis-url',
      redis.url,
    ],
    `tollgate operator: Redis ${REFUSAL}`,
  );
});
