// Redis behind Sentinel (redis+sentinel://): two gateways and a router worker (a process of its
// own, serving a queue-mode router) find the primary through three Sentinels, and when it is
// killed (-9) under load they follow the replica the Sentinels promote, without a restart. Every
// request meanwhile is answered, 200 or 503 with Retry-After, none hangs. Without the failover
// loss bound, what is lost is measured and stays within what docs/redis.md states (the charges of
// requests that ended from shortly before the primary died until the gateways reached the new
// one); with it (--redis-wait-replicas 1), what was spent equals what was served, exactly, and no
// budget is overspent.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../../support/fake-openai.ts';
import type { FakeBackend } from '../../../support/fake-server.ts';
import { testBed, type BedGateway } from '../../../support/test-bed.ts';
import { startSentinelGroup, type SentinelGroup } from '../../../support/redis-sentinel.ts';
import { eventually } from '../../../support/eventually.ts';
import { CONVERGE_MS, HANG_MS } from '../../../support/patience.ts';
import { assertAnswered, assertChargedAsServed, micros, startFailoverLoad, type LoadUser } from '../../../support/failover-load.ts';
import { startWorkerProcess, type GatewayProcess } from '../../../support/gateway-process.ts';

const bed = testBed();
const keys = { alice: generateKey().secret, bob: generateKey().secret };
/** Bob's budget, which the load spends to its end. */
const BOB_BUDGET = 0.1;

for (const bound of [false, true]) {
  describe(`Redis behind Sentinel, ${bound ? 'with' : 'without'} the failover loss bound`, { timeout: HANG_MS }, () => {
    let group: SentinelGroup;
    let backend: FakeBackend;
    let gateways: BedGateway[];
    let worker: GatewayProcess;

    before(async () => {
      group = await startSentinelGroup();
      backend = await startFakeOpenAI();
      gateways = await bed.gateways(
        2,
        {
          users: [
            { id: 'alice', name: 'Alice', budget: 1000, keys: [{ name: 'a', key: keys.alice }] },
            { id: 'bob', name: 'Bob', budget: BOB_BUDGET, keys: [{ name: 'b', key: keys.bob }] },
          ],
          models: [
            {
              id: 'chat',
              type: 'text-generation',
              costs: { prompt_tokens: 1000, completion_tokens: 1000 },
              providers: [{ model: 'upstream', type: 'vllm', args: { api_url: backend.url } }],
            },
            {
              id: 'queued',
              type: 'text-generation',
              routing_mode: 'queue',
              costs: { prompt_tokens: 1000, completion_tokens: 1000 },
              providers: [{ model: 'upstream', type: 'vllm', max_concurrent: 4, args: { api_url: backend.url } }],
            },
          ],
        },
        { settings: { redisUrl: group.url, routerWorkers: 0, ...(bound && { redisWaitReplicas: 1, redisWaitTimeoutMs: 1000 }) } },
      );
      // Queue mode's router worker, in a process of its own, finds Redis the same way.
      worker = await startWorkerProcess(['--redis-url', group.url]);
    });
    after(async () => {
      await worker?.stop();
      for (const gw of gateways ?? []) await gw.close();
      await backend?.close();
      await group?.stop();
    });

    /** What a user has spent, in micros, as the gateways read it from the primary. */
    const spent = async (user: LoadUser) => {
      const me = await gateways[0]!.get('/v1/me', { authorization: `Bearer ${keys[user]}` });
      assert.equal(me.status, 200);
      return micros(me.body.spent as number);
    };

    it('serves through the primary the Sentinels name, queue mode included, and says which in /readyz and /metrics', async () => {
      const once = (gw: BedGateway, model: string) =>
        fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys.alice}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
        });
      for (const gw of gateways) for (const model of ['chat', 'queued']) assert.equal((await once(gw, model)).status, 200);
      const primary = `127.0.0.1:${await group.primaryPort()}`;
      const ready = await gateways[0]!.get('/readyz');
      assert.equal(ready.status, 200);
      assert.deepEqual([ready.body.redis.mode, ready.body.redis.primary], ['sentinel', primary]);
      assert.equal(ready.body.redis.durability?.wait_replicas, bound ? 1 : undefined);
      // The replicas as the primary reports them, read in the background.
      const replicas = await eventually(async () => (await gateways[0]!.get('/readyz')).body.redis.replicas, "the primary's replicas read");
      assert.equal(replicas.length, 2);
      for (const replica of replicas)
        assert.deepEqual([replica.state, typeof replica.lag_seconds, typeof replica.behind_bytes], ['online', 'number', 'number']);
      const metrics = (await gateways[0]!.get('/metrics')).body as string;
      assert.match(metrics, new RegExp(`^tollgate_redis_info\\{mode="sentinel",primary="${primary.replaceAll('.', '\\.')}"\\} 1$`, 'm'));
      assert.equal(metrics.match(/^tollgate_redis_replica_behind_bytes\{/gm)?.length, 2);
    });

    it(`follows a failover under load: every request answered, 200 or 503 with Retry-After; ${bound ? 'spent equals served, exactly' : 'the loss within the stated bound'}`, async (t) => {
      const before = { alice: await spent('alice'), bob: await spent('bob') };
      // Each gateway: direct and queue-mode requests of Alice, and Bob's until his budget runs out.
      const load = startFailoverLoad(t, gateways, keys, ['chat', 'queued']);
      await eventually(() => load.answers.filter((a) => a.status === 200).length >= 20, 'steady load');

      const old = await group.primaryPort();
      const killedAt = Date.now();
      await group.nodes.get(old)!.kill();
      const promoted = await eventually(
        async () => {
          const port = await group.primaryPort();
          return port !== old ? port : undefined;
        },
        'a replica promoted by the Sentinels',
        { timeoutMs: CONVERGE_MS },
      );
      assert.ok(group.nodes.has(promoted));
      // /readyz names the new primary once the gateways are on it.
      for (const gw of gateways)
        await eventually(
          async () => (await gw.get('/readyz')).body.redis?.primary === `127.0.0.1:${promoted}`,
          'the new primary in /readyz',
          {
            timeoutMs: CONVERGE_MS,
          },
        );
      // So does the router worker's.
      await eventually(
        async () =>
          ((await (await fetch(`${worker.url}/readyz`)).json()) as { redis?: { primary?: string } }).redis?.primary ===
          `127.0.0.1:${promoted}`,
        "the new primary in the router worker's /readyz",
        { timeoutMs: CONVERGE_MS },
      );
      // And its /metrics: read on its own, perhaps while the worker's connection settles on the
      // promoted primary (a connection made while it was still a replica is made again).
      const named = new RegExp(`^tollgate_redis_info\\{mode="sentinel",primary="127\\.0\\.0\\.1:${promoted}"\\} 1$`, 'm');
      await eventually(
        async () => named.test(await (await fetch(`${worker.url}/metrics`)).text()),
        "the new primary in the router worker's /metrics",
        {
          timeoutMs: CONVERGE_MS,
        },
      );
      // Both gateways serve again, on the new primary.
      await load.servingAgain(load.answers.length, 'each gateway serving both routers after the failover');
      const recoveredAt = Date.now();
      await load.stop();
      assertAnswered(load.answers);
      // Ready again once its background check has had an answer from the new primary.
      for (const gw of gateways) await eventually(async () => (await gw.get('/readyz')).status === 200, 'ready again');

      if (bound) {
        // Every settlement is confirmed in the end (those cut by the failover are sent again, once).
        for (const gw of gateways)
          await eventually(
            async () => (await gw.get('/readyz')).body.redis.durability.pending_settlements === 0,
            'every settlement confirmed',
            { timeoutMs: CONVERGE_MS },
          );
      }
      await assertChargedAsServed(t, load, { bound, killedAt, recoveredAt, charged: async (user) => (await spent(user)) - before[user] });
      if (bound) {
        assert.ok((await spent('bob')) <= micros(BOB_BUDGET), "Bob's budget is not overspent");
        assert.ok(
          load.answers.some((a) => a.user === 'bob' && a.status === 402),
          'Bob reached the end of his budget',
        );
      }
    });
  });
}
