// The ledger contract on both stores: in memory, and on a real redis-server.
import { MemoryStore } from '../../../../core/store/memory/memory-store.ts';
import { RedisStore } from '../../../../core/store/redis/redis-store.ts';
import { useRedis } from '../../../support/use-redis.ts';
import { describeLedgerContract } from './ledger-contract.ts';
import { describeAlertsContract, describeLevelsContract } from './levels-contract.ts';

const RETENTION = { usageRetentionMs: 30 * 86_400_000 };

describeLedgerContract('memory store', {
  make: async () => new MemoryStore(RETENTION),
  dispose: (store) => store.close(),
});

const redis = useRedis();

describeLedgerContract('redis store', {
  make: async () => {
    await redis.empty();
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
    await redis.empty();
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
    await redis.empty();
    return RedisStore.connect(redis.url, RETENTION);
  },
  dispose: (store) => store.close(),
});
