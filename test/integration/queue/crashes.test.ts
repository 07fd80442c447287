// What queue mode does when a process dies. A router worker that read entries and died before
// answering loses none of them: another worker claims them once they sat idle, and answers; a
// worker killed under load costs no request and serves none twice. A gateway killed while its
// requests held provider slots does not keep them: the slots expire, since no one renews them,
// and the requests waiting behind them go ahead.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startWorkerProcess, type GatewayProcess } from '../../support/gateway-process.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { testBed } from '../../support/test-bed.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { contents, queueChat, queueConfig } from '../../support/queue.ts';
import { eventually } from '../../support/eventually.ts';
import { queueKeys, WORKER_GROUP } from '../../../core/store/redis/queue-keys.ts';

const bed = testBed({ redis: true });
let client: Redis;
let backend: FakeBackend;
let config: GatewayConfig;
let key: string;
const workers: GatewayProcess[] = [];

function gateway(...args: string[]): Promise<GatewayProcess> {
  return bed.process(config, { args });
}

async function worker(...args: string[]): Promise<GatewayProcess> {
  const started = await startWorkerProcess(['--redis-url', bed.redis.url, '--claim-idle-seconds', '0.3', ...args]);
  workers.push(started);
  return started;
}

before(async () => {
  await bed.ready();
  client = new Redis(bed.redis.url);
  backend = await startFakeOpenAI();
  const setup = queueConfig({ providers: [{ id: 'only', backend, maxConcurrent: 2 }], priorities: { app: 0 } });
  key = setup.keys.app!;
  config = setup.config;
});

after(async () => {
  await Promise.all(workers.map((p) => p.stop()));
  client.disconnect();
  await backend.close();
});

describe('a router worker that dies', () => {
  test('entries it read and never answered are claimed by another worker, and answered', async () => {
    const gw = await gateway();
    backend.requests.length = 0;
    // A worker that reads the next two entries and dies before answering: nobody else reads them.
    await client.xgroup('CREATE', queueKeys.stream('chat'), WORKER_GROUP, '$', 'MKSTREAM').catch(() => {});
    const sent = [queueChat(gw.url, key, 'orphan 1'), queueChat(gw.url, key, 'orphan 2')];
    await eventually(async () => (await client.xlen(queueKeys.stream('chat'))) === 2, 'both entries are in the stream');
    const read = (await client.xreadgroup('GROUP', WORKER_GROUP, 'doomed', 'COUNT', 10, 'STREAMS', queueKeys.stream('chat'), '>')) as [
      string,
      unknown[],
    ][];
    assert.equal(read[0]![1].length, 2, 'the doomed worker read both');
    const rescuer = await worker();
    try {
      const outcomes = await Promise.all(sent);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        [200, 200],
      );
      assert.deepEqual(contents(backend).sort(), ['orphan 1', 'orphan 2']);
      assert.ok(
        rescuer.output.some((line) => line.includes('claimed entries another worker left unanswered')),
        'the rescuer says it claimed them',
      );
    } finally {
      await rescuer.stop();
      await gw.stop();
    }
  });

  test('killed under load: every request is answered once, by the surviving worker', async () => {
    const gw = await gateway();
    const doomed = await worker();
    const survivor = await worker();
    backend.requests.length = 0;
    backend.behave({ delayMs: 20 });
    try {
      const requests = Array.from({ length: 120 }, (_, i) => queueChat(gw.url, key, `load ${i}`));
      await eventually(() => backend.requests.length >= 20, 'the load is under way');
      doomed.child.kill('SIGKILL');
      const outcomes = await Promise.all(requests);
      assert.deepEqual(new Set(outcomes.map((o) => o.status)), new Set([200]), 'no request lost');
      const received = contents(backend);
      assert.equal(received.length, 120, 'none answered twice');
      assert.equal(new Set(received).size, 120);
    } finally {
      backend.behave({});
      await survivor.stop();
      await gw.stop();
    }
  });
});

describe('a gateway that dies holding slots', () => {
  test('the slots come back by themselves, the requests behind them are served, and the cap holds all along', async () => {
    const doomed = await gateway('--queue-slot-ttl-seconds', '1');
    const other = await gateway('--queue-slot-ttl-seconds', '1');
    const workers = await worker();
    backend.requests.length = 0;
    backend.resetPeak();
    backend.behave({ delayMs: 60_000 });
    try {
      const held = [
        queueChat(doomed.url, key, 'held 1').catch(() => undefined),
        queueChat(doomed.url, key, 'held 2').catch(() => undefined),
      ];
      await eventually(async () => (await client.zcard(queueKeys.slots('chat', 'only'))) === 2, 'the dead gateway holds both slots');
      doomed.child.kill('SIGKILL');
      await Promise.all(held);
      backend.behave({});
      // The slots are still held: the next request waits until they expire (within a second).
      assert.equal(await client.zcount(queueKeys.slots('chat', 'only'), Date.now(), '+inf'), 2);
      const outcome = await queueChat(other.url, key, 'after the crash');
      assert.equal(outcome.status, 200);
      assert.ok(backend.peakOpenRequests <= 2, `the backend saw ${backend.peakOpenRequests} at once`);
      await eventually(async () => (await client.zcard(queueKeys.slots('chat', 'only'))) === 0, 'no slot is left held');
    } finally {
      backend.behave({});
      await workers.stop();
      await other.stop();
    }
  });
});
