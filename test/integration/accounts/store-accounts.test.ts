// The account directory's contract (directory-contract.ts) on file mode's directory, StoreAccounts,
// over the in-memory store and over a real redis-server: what the admin API writes is the store's
// at once, and a user may only name a team that exists.
import { MemoryStore } from '../../../core/store/memory/memory-store.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import type { Store } from '../../../core/store/store.ts';
import { StoreAccounts } from '../../../gateway/accounts/store-accounts.ts';
import { useRedis } from '../../support/use-redis.ts';
import { describeAccountDirectoryContract, type DirectoryUnderTest } from './directory-contract.ts';

const RETENTION_MS = 7 * 86_400_000;

function underTest(store: Store): DirectoryUnderTest {
  return {
    directory: new StoreAccounts(store.accounts),
    seedUser: async (user) => void (await store.accounts.createUser(user, new Date())),
    close: () => store.close(),
  };
}

describeAccountDirectoryContract('StoreAccounts on the memory store', {
  make: async () => underTest(new MemoryStore({ usageRetentionMs: RETENTION_MS })),
  requiresKnownTeam: true,
  settleMs: 0,
});

const redis = useRedis();

describeAccountDirectoryContract('StoreAccounts on Redis', {
  make: async () => {
    await redis.empty();
    return underTest(await RedisStore.connect(redis.url, { usageRetentionMs: RETENTION_MS }));
  },
  requiresKnownTeam: true,
  settleMs: 0,
});
