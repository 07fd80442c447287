// The ledger contract on both stores: in memory, and on a real redis-server.
import { after, before } from 'node:test';
import { Redis } from 'ioredis';
import { MemoryStore } from '../../../../core/store/memory/memory-store.ts';
import { RedisStore } from '../../../../core/store/redis/redis-store.ts';
import { startRedis, type RunningRedis } from '../../../support/redis-server.ts';
import { describeLedgerContract } from './ledger-contract.ts';
import { describeAlertsContract, describeLevelsContract } from './levels-contract.ts';

const RETENTION = { usageRetentionMs: 30 * 86_400_000 };

describeLedgerContract('memory store', {
  make: async () => new MemoryStore(RETENTION),
  dispose: (store) => store.close(),
});

let redis: RunningRedis;
let admin: Redis;
before(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
after(async () => {
  admin.disconnect();
  await redis.stop();
});

describeLedgerContract('redis store', {
  make: async () => {
    await admin.flushall();
    return RedisStore.connect(redis.url, RETENTION);
  },
  dispose: (store) => store.close(),
});

describeLevelsContract('memory store', {
  make: async () => new MemoryStore(RETENTION),
  dispose: (store) => store.close(),
});

describeLevelsContract('redis store', {
  make: async () => {
    await admin.flushall();
    return RedisStore.connect(redis.url, RETENTION);
  },
  dispose: (store) => store.close(),
});

describeAlertsContract('memory store', {
  make: async () => new MemoryStore(RETENTION),
  dispose: (store) => store.close(),
});

describeAlertsContract('redis store', {
  make: async () => {
    await admin.flushall();
    return RedisStore.connect(redis.url, RETENTION);
  },
  dispose: (store) => store.close(),
});
