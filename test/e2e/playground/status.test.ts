// The Status page in a real browser (issue 31, "Visible"): an admin sees whether the gateway is
// ready, and the Redis it is on: the mode, the primary, each replica's state, and the failover
// loss bound with what its replicas did not confirm. A gateway on a primary with one replica
// and --redis-wait-replicas 1; a user key does not see the page. A gateway on a Redis Cluster shows
// every primary instead, with the hash slots it serves and its replica.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { startReplicatedRedis, type ReplicatedRedis } from '../../support/redis-sentinel.ts';
import { startRedisCluster, type RedisCluster } from '../../support/redis-cluster.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type PlaygroundBrowser } from './browser.ts';
import { goTo, navigationLinks, rowOf, signIn } from './steps.ts';

const bed = testBed();
const userKey = generateKey().secret;

let redis: ReplicatedRedis;
let cluster: RedisCluster;
let gw: TestGateway;
let onCluster: TestGateway;
let browser: PlaygroundBrowser;

before(async () => {
  redis = await startReplicatedRedis(1);
  cluster = await startRedisCluster();
  const config = { users: [{ id: 'ann', name: 'Ann', keys: [{ name: 'k', key: userKey }] }], models: [] };
  gw = await bed.gateway(config, { settings: { redisUrl: redis.primary.url, redisWaitReplicas: 1, redisWaitTimeoutMs: 1000 } });
  onCluster = await bed.gateway(config, { settings: { redisUrl: cluster.url } });
  browser = await launchPlaygroundBrowser();
});

after(async () => {
  await browser?.close();
  await gw?.close();
  await onCluster?.close();
  await redis?.stop();
  await cluster?.stop();
});

/** The value beside a label of the page's summaries (a <dt> and its <dd>). */
const summaryValue = (page: Awaited<ReturnType<PlaygroundBrowser['open']>>['page'], label: string) =>
  page
    .locator('dl > div')
    .filter({ has: page.getByText(label, { exact: true }) })
    .locator('dd')
    .textContent();

describe('the Status page', () => {
  test('shows an admin the gateway ready, its Redis primary and replica, and the failover loss bound', async () => {
    const { page } = await browser.open(gw.url);
    await signIn(page, gw.adminKey);
    await goTo(page, 'Status');
    assert.equal(await summaryValue(page, 'Gateway'), 'ready');
    assert.equal(await summaryValue(page, 'Mode'), 'one address');
    assert.equal(await summaryValue(page, 'Primary'), `127.0.0.1:${redis.primary.port}`);
    assert.equal(await summaryValue(page, 'Failover loss bound'), 'on: 1 replica confirms each write');
    assert.equal(await summaryValue(page, 'Settlements being sent again'), '0');
    // The replica as the primary reports it (read every 5 s; the page reads again as often).
    const row = await eventually(
      () => rowOf(page, `127.0.0.1:${redis.replicas[0]!.port}`),
      (cells) => cells.length > 0,
      'the replica listed',
    );
    assert.equal(row[0], 'online');
    await screenshot(page, 'status');
  });

  test('on a Redis Cluster, lists every primary with the hash slots it serves and its replica', async () => {
    const { page } = await browser.open(onCluster.url);
    await signIn(page, onCluster.adminKey);
    await goTo(page, 'Status');
    assert.equal(await summaryValue(page, 'Mode'), 'Redis Cluster');
    assert.equal(await page.locator('dl').getByText('Primary', { exact: true }).count(), 0, 'no one primary in the summary');
    for (const { port, slots } of await cluster.primaries()) {
      const row = await eventually(
        () => rowOf(page, `127.0.0.1:${port}`),
        (cells) => cells.length > 0,
        `the primary ${port} listed`,
      );
      assert.equal(row[0], slots.map(([from, to]) => `${from}-${to}`).join(', '));
      assert.match(row[1]!, /^127\.0\.0\.1:\d+ \(online, \d+ s, \d+ bytes behind\)$/);
    }
  });

  test('is not offered to a user key', async () => {
    const { page } = await browser.open(gw.url);
    await signIn(page, userKey);
    assert.deepEqual(await navigationLinks(page), ['Chat', 'Transcribe', 'Usage', 'Account']);
  });
});
