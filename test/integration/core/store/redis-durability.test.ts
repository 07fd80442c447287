// The failover loss bound (--redis-wait-replicas 1), on a primary and one replica: a request's
// admission, its settlement and every account change count only once the replica confirms them
// (Redis WAIT). A replica that stops answering (SIGSTOP, as a stuck or cut-off replica) makes new
// requests and admin changes answer 503 with Retry-After; a request already served keeps its
// settlement and sends it again until the replica confirms it, charged once however often it was
// sent. The same on a Redis Cluster (three primaries, a replica each), the replica of the primary
// holding the user's money stopped. The same under a real failover is in redis-sentinel.test.ts.
// A gateway started while the replica confirms nothing waits for it, saying so, and starts once it
// does.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKey } from '../../../../core/accounts/api-keys.ts';
import { startFakeOpenAI } from '../../../support/fake-openai.ts';
import type { FakeBackend } from '../../../support/fake-server.ts';
import { testBed, type BedGateway } from '../../../support/test-bed.ts';
import { startReplicatedRedis } from '../../../support/redis-sentinel.ts';
import { askRedis, type RunningRedis } from '../../../support/redis-server.ts';
import { startRedisCluster } from '../../../support/redis-cluster.ts';
import { keys } from '../../../../core/store/redis/keys.ts';
import { eventually } from '../../../support/eventually.ts';
import { CONVERGE_MS, HANG_MS, PROCESS_START_MS } from '../../../support/patience.ts';
import { SOURCES_CLI, startGatewayProcess, type GatewayProcess } from '../../../support/gateway-process.ts';

const bed = testBed();
const alice = generateKey().secret;
const asAlice = { authorization: `Bearer ${alice}` };
/** How long a write waits for the replica: long enough for a replica on a busy machine, short enough for the test. */
const WAIT_TIMEOUT_MS = 1000;

/** Where the test runs: the Redis URL, the primary holding Alice's money and the replica that must confirm its writes. */
interface Setup {
  readonly url: string;
  readonly primary: RunningRedis;
  readonly replica: RunningRedis;
  stop(): Promise<void>;
}

const SETUPS: [string, () => Promise<Setup>][] = [
  [
    'a primary and one replica',
    async () => {
      const started = await startReplicatedRedis(1);
      return { url: started.primary.url, primary: started.primary, replica: started.replicas[0]!, stop: () => started.stop() };
    },
  ],
  [
    'a Redis Cluster, the replica of the primary holding the money stopped',
    async () => {
      const cluster = await startRedisCluster();
      const shard = await cluster.shardOf(keys.ledger('alice'));
      return { url: cluster.url, primary: shard.primary, replica: shard.replicas[0]!, stop: () => cluster.stop() };
    },
  ],
];

for (const [where, start] of SETUPS)
  describe(`the failover loss bound (--redis-wait-replicas): ${where}`, { timeout: HANG_MS }, () => {
    let redis: Setup;
    let backend: FakeBackend;
    let gateway: BedGateway;

    before(async () => {
      redis = await start();
      backend = await startFakeOpenAI();
      gateway = await bed.gateway(
        {
          users: [{ id: 'alice', name: 'Alice', budget: 100, keys: [{ name: 'a', key: alice }] }],
          models: [
            {
              id: 'chat',
              type: 'text-generation',
              costs: { prompt_tokens: 1000, completion_tokens: 1000 },
              providers: [{ model: 'upstream', type: 'vllm', args: { api_url: backend.url } }],
            },
          ],
        },
        { settings: { redisUrl: redis.url, redisWaitReplicas: 1, redisWaitTimeoutMs: WAIT_TIMEOUT_MS } },
      );
    });
    after(async () => {
      redis?.replica.resume();
      await gateway?.close();
      await backend?.close();
      await redis?.stop();
    });

    const chat = () => gateway.post('/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: 'hi' }] }, asAlice);
    const me = async () => (await gateway.get('/v1/me', asAlice)).body as { spent: number; reserved: number };
    const micros = (dollars: number) => Math.round(dollars * 1e6);

    /** A request served, and charged its cost to the micro-unit. */
    const servedAndCharged = async () => {
      const before = micros((await me()).spent);
      const answer = await chat();
      assert.equal(answer.status, 200);
      await eventually(async () => micros((await me()).spent) === before + micros(answer.body.usage.cost), 'the request charged');
    };

    it('serves and charges as usual while the replica confirms', servedAndCharged);

    it('serves and charges on a primary that lost its scripts (restarted, or a replica just promoted)', async () => {
      await askRedis(redis.primary.port, (client) => client.script('FLUSH'));
      await servedAndCharged();
    });

    it('refuses new requests and admin changes with 503 while no replica confirms, and charges a request served meanwhile exactly once', async () => {
      const replica = redis.replica;
      const spentBefore = micros((await me()).spent);
      // The records of requests served (a refused one is recorded too, at once: it has nothing to settle).
      const servedRecords = async () =>
        ((await gateway.get('/v1/usage', asAlice)).body.data as { status: number; charged: number }[]).filter((r) => r.status === 200);
      const recordsBefore = (await servedRecords()).length;
      // A request admitted (confirmed), then held at the backend while the replica stops answering.
      const sent = backend.requests.length;
      let release!: () => void;
      backend.once({ until: new Promise<void>((resolve) => (release = resolve)) });
      const served = chat();
      await eventually(() => backend.requests.length > sent, 'the request at the backend');
      replica.pause();
      try {
        // A change made while the replica does not answer: written on the primary, but not confirmed.
        const change = await gateway.post('/v1/admin/users', { id: 'bob', name: 'Bob', budget: 5 });
        assert.equal(change.status, 503);
        assert.match(change.body.error.message, /replicas did not confirm it in time/);
        assert.ok(change.headers.get('retry-after'));
        // From then on new work is refused at once, until the replica catches up.
        const refused = await chat();
        assert.equal(refused.status, 503);
        assert.equal(refused.body.error.code, 'store_unavailable');
        assert.ok(refused.headers.get('retry-after'));
        const again = await gateway.post('/v1/admin/users', { id: 'carol', name: 'Carol', budget: 5 });
        assert.equal(again.status, 503);
        assert.match(again.body.error.message, /replicas have not confirmed the latest ones/);
        // The held request is served; its settlement cannot be confirmed, so its usage record waits.
        release();
        const answer = await served;
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        // Its settlement ran on the primary (what /v1/me reads), but is not confirmed: no usage record yet.
        await eventually(
          async () => micros((await me()).spent) === spentBefore + micros(answer.body.usage.cost),
          'the charge on the primary',
          {
            timeoutMs: CONVERGE_MS,
          },
        );
        assert.equal((await servedRecords()).length, recordsBefore, 'no usage record before the settlement is confirmed');
        // /readyz says so; the settlement is sent again (its second try ran too, and found the first one's mark).
        const durability = async () => (await gateway.get('/readyz')).body.redis.durability;
        await eventually(async () => (await durability()).unconfirmed.settlement >= 2, 'the settlement sent again', {
          timeoutMs: CONVERGE_MS,
        });
        assert.equal((await durability()).pending_settlements, 1);
        assert.equal((await durability()).unconfirmed.admission, 1);
        assert.equal((await durability()).unconfirmed.change, 2);
        replica.resume();
        // Confirmed at last: recorded, and charged once, however often the settlement was sent.
        const records = await eventually(
          async () => {
            const data = await servedRecords();
            return data.length > recordsBefore ? data : undefined;
          },
          'the usage record, once the replica confirms',
          { timeoutMs: CONVERGE_MS },
        );
        assert.equal(records.length, recordsBefore + 1);
        assert.equal(micros(records[0]!.charged), micros(answer.body.usage.cost));
        assert.equal(micros((await me()).spent), spentBefore + micros(answer.body.usage.cost));
        await eventually(async () => (await me()).reserved === 0, 'nothing held');
        await eventually(async () => (await durability()).pending_settlements === 0, 'every settlement confirmed', {
          timeoutMs: CONVERGE_MS,
        });
        const metrics = (await gateway.get('/metrics')).body as string;
        assert.match(metrics, /^tollgate_redis_writes_unconfirmed_total\{kind="settlement"\} [1-9]/m);
        assert.match(metrics, /^tollgate_redis_settlements_pending 0$/m);
        // The first change did reach the primary (it said so: check, and make it again if missing); the second was not made.
        assert.equal((await gateway.get('/v1/admin/users/bob')).status, 200);
        assert.equal((await gateway.get('/v1/admin/users/carol')).status, 404);
      } finally {
        replica.resume();
      }
    });
  });

describe('a gateway started with the loss bound while its replica has not confirmed a write', { timeout: HANG_MS }, () => {
  it('says in one line that it waits for the replicas, and starts once the replica confirms: no stack trace', async () => {
    const redis = await startReplicatedRedis(1);
    const replica = redis.replicas[0]!;
    const admin = generateKey().secret;
    const lines: string[] = [];
    let exited: unknown;
    let starting: Promise<GatewayProcess> | undefined;
    try {
      // As a replica still syncing, or slow: it confirms nothing until it runs again.
      replica.pause();
      const args = ['--redis-url', redis.primary.url, '--redis-wait-replicas', '1', '--redis-wait-timeout-ms', '500', '--admin-key', admin];
      starting = startGatewayProcess(args, {}, SOURCES_CLI, (line) => lines.push(line));
      starting.catch((error: unknown) => (exited = error));
      const waiting = await eventually(
        () => exited ?? lines.find((line) => line.includes("waiting for Redis' replicas to confirm the start-up writes")),
        'the line saying the start waits for the replicas',
        { timeoutMs: PROCESS_START_MS },
      );
      assert.equal(typeof waiting, 'string', `the gateway did not wait: ${String(exited)}`);
      replica.resume();
      const gateway = await starting;
      await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 'the gateway ready');
      // The bootstrap admin's key, written while the replica was paused, works.
      const users = await fetch(`${gateway.url}/v1/admin/users`, { headers: { authorization: `Bearer ${admin}` } });
      assert.equal(users.status, 200);
      assert.deepEqual(
        lines.filter((line) => /^\s+at /.test(line)),
        [],
        'no stack trace',
      );
    } finally {
      replica.resume();
      await (await starting?.catch(() => undefined))?.stop();
      await redis.stop();
    }
  });
});
