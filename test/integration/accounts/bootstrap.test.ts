// The bootstrap admin key: gateways starting together with the same key all start, and the key
// belongs to the admin once, whatever the order their writes land in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureBootstrapAdmin } from '../../../gateway/accounts/bootstrap.ts';
import { generateKey, hashKey } from '../../../core/accounts/api-keys.ts';
import { RedisStore } from '../../../core/store/redis/redis-store.ts';
import { useRedis } from '../../support/use-redis.ts';

const redis = useRedis();

test('several gateways making the same bootstrap admin at once all succeed', async () => {
  const stores = await Promise.all(Array.from({ length: 4 }, () => RedisStore.connect(redis.url, { usageRetentionMs: 86_400_000 })));
  try {
    const secret = generateKey().secret;
    await Promise.all(stores.map((store) => ensureBootstrapAdmin(store.accounts, secret, new Date())));
    const found = await stores[0]!.accounts.findKey(hashKey(secret));
    assert.equal(found?.user.id, 'admin');
    assert.equal(found?.user.role, 'admin');
    assert.equal((await stores[0]!.accounts.listKeys('admin')).length, 1);
  } finally {
    await Promise.all(stores.map((store) => store.close()));
  }
});
