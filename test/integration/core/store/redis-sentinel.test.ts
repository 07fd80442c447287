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
import { startWorkerProcess, type GatewayProcess } from '../../../support/gateway-process.ts';

const bed = testBed();
const alice = generateKey().secret;
const bob = generateKey().secret;
/** The request's deadline: an answer must come within the gateway's own timeouts. */
const REQUEST_DEADLINE_MS = 30_000;
/** Bob's budget, which the load spends to its end. */
const BOB_BUDGET = 0.1;
/** How long before the primary's death a write may not have reached a replica, at most (docs/redis.md). */
const REPLICATION_WINDOW_MS = 1000;

interface Answer {
  /** Which gateway answered (its index), for which router and user. */
  readonly gateway?: number;
  readonly model?: string;
  readonly user: 'alice' | 'bob';
  readonly status: number | 'hung';
  readonly retryAfter: string | null;
  /** The cost the caller was told, in micros. */
  readonly micros: number;
  /** When the answer came (ms). */
  readonly at: number;
}

const micros = (dollars: number) => Math.round(dollars * 1e6);

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
            { id: 'alice', name: 'Alice', budget: 1000, keys: [{ name: 'a', key: alice }] },
            { id: 'bob', name: 'Bob', budget: BOB_BUDGET, keys: [{ name: 'b', key: bob }] },
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

    async function chat(gw: BedGateway, model = 'chat', user: 'alice' | 'bob' = 'alice'): Promise<Answer> {
      try {
        const response = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${user === 'alice' ? alice : bob}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
          signal: AbortSignal.timeout(REQUEST_DEADLINE_MS),
        });
        const body = (await response.json()) as { usage?: { cost: number } };
        const cost = response.status === 200 ? micros(body.usage?.cost ?? 0) : 0;
        return { user, status: response.status, retryAfter: response.headers.get('retry-after'), micros: cost, at: Date.now() };
      } catch {
        return { user, status: 'hung', retryAfter: null, micros: 0, at: Date.now() };
      }
    }

    /** What a user has spent, in micros, as the gateways read it from the primary. */
    const spent = async (user: 'alice' | 'bob') => {
      const me = await gateways[0]!.get('/v1/me', { authorization: `Bearer ${user === 'alice' ? alice : bob}` });
      assert.equal(me.status, 200);
      return micros(me.body.spent as number);
    };

    it('serves through the primary the Sentinels name, queue mode included, and says which in /readyz and /metrics', async () => {
      for (const gw of gateways) assert.equal((await chat(gw)).status, 200);
      for (const gw of gateways) assert.equal((await chat(gw, 'queued')).status, 200);
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
      const answers: Answer[] = [];
      let loading = true;
      // A failed assertion ends the load too (else it would go on against closed gateways).
      t.after(() => {
        loading = false;
      });
      // Each gateway: direct and queue-mode requests of Alice, and Bob's until his budget runs out.
      const load = gateways.map(async (gw, gateway) => {
        for (let i = 0; loading; i++) {
          const model = i % 2 === 0 ? 'chat' : 'queued';
          const user = i % 3 === 2 ? 'bob' : 'alice';
          answers.push({ ...(await chat(gw, model, user)), gateway, model });
        }
      });
      await eventually(() => answers.filter((a) => a.status === 200).length >= 20, 'steady load');

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
      const since = answers.length;
      await eventually(
        () =>
          gateways.every((_, i) =>
            ['chat', 'queued'].every((model) =>
              answers.slice(since).some((a) => a.gateway === i && a.model === model && a.user === 'alice' && a.status === 200),
            ),
          ),
        'each gateway serving both routers after the failover',
        { timeoutMs: CONVERGE_MS },
      );
      const recoveredAt = Date.now();
      loading = false;
      await Promise.all(load);

      const statuses = new Set(answers.map((a) => a.status));
      assert.deepEqual(
        [...statuses].filter((s) => s !== 200 && s !== 503 && s !== 402),
        [],
        'every request answered 200 or 503 (or 402, Bob past his budget)',
      );
      for (const answer of answers.filter((a) => a.status === 503)) assert.ok(answer.retryAfter !== null, 'a 503 says when to come back');
      // Ready again once its background check has had an answer from the new primary.
      for (const gw of gateways) await eventually(async () => (await gw.get('/readyz')).status === 200, 'ready again');

      const served = (user: 'alice' | 'bob', from = 0, to = Number.POSITIVE_INFINITY) =>
        answers.filter((a) => a.user === user && a.at >= from && a.at <= to).reduce((sum, a) => sum + a.micros, 0);
      const charged = async (user: 'alice' | 'bob') => (await spent(user)) - before[user];
      if (bound) {
        // Every settlement is confirmed in the end (those cut by the failover are sent again, once).
        for (const gw of gateways)
          await eventually(
            async () => (await gw.get('/readyz')).body.redis.durability.pending_settlements === 0,
            'every settlement confirmed',
            {
              timeoutMs: CONVERGE_MS,
            },
          );
        assert.equal(await charged('alice'), served('alice'), "Alice's spending equals what she was served");
        assert.equal(await charged('bob'), served('bob'), "Bob's spending equals what he was served");
        assert.ok((await spent('bob')) <= micros(BOB_BUDGET), "Bob's budget is not overspent");
        assert.ok(
          answers.some((a) => a.user === 'bob' && a.status === 402),
          'Bob reached the end of his budget',
        );
      } else {
        // Never more than served; what is lost is at most what ended from just before the death
        // of the primary until the gateways reached the new one.
        for (const user of ['alice', 'bob'] as const) {
          const lost = served(user) - (await charged(user));
          const window = served(user, killedAt - REPLICATION_WINDOW_MS, recoveredAt);
          t.diagnostic(
            `${user}: served ${served(user)} micros, lost ${lost} (${((100 * lost) / Math.max(1, served(user))).toFixed(1)}%), at most ${window} ended in the window of ${recoveredAt - killedAt + REPLICATION_WINDOW_MS} ms`,
          );
          assert.ok(lost >= 0, `${user} charged no more than served`);
          assert.ok(lost <= window, `${user}'s loss (${lost}) within what ended in the failover's window (${window})`);
        }
      }
    });
  });
}
