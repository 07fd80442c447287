// The prefix index (prefix-cache affinity), in memory and in a real Redis, held to one contract:
// a replica matches the leading blocks of a chain it was sent, no further than the first block it
// was not; a hash counts for its time limit only; each replica keeps its most recent blocks up to
// its bound; replicas are apart.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PrefixIndexLimits, PrefixIndexStore } from '../../../../core/store/prefix-index.ts';
import { MemoryPrefixIndex } from '../../../../core/store/memory/memory-prefix-index.ts';
import { RedisPrefixIndex } from '../../../../core/store/redis/redis-prefix-index.ts';
import { useRedis } from '../../../support/use-redis.ts';

const redis = useRedis({ emptyBeforeEach: true });

const LIMITS: PrefixIndexLimits = { blocksPerReplica: 6, ttlMs: 60_000 };
const kinds: [string, () => PrefixIndexStore][] = [
  ['memory', () => new MemoryPrefixIndex(LIMITS)],
  ['redis', () => new RedisPrefixIndex(redis.admin, LIMITS)],
];

const chain = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

for (const [kind, make] of kinds) {
  describe(`prefix index (${kind})`, () => {
    test('a replica matches the leading blocks it was sent, up to the first it was not', async () => {
      const index = make();
      await index.record('a', ['s0', 's1', 's2', 'q0'], 1000);
      await index.record('b', ['t0', 't1'], 1000);
      assert.deepEqual(await index.matches(['a', 'b', 'c'], ['s0', 's1', 's2', 'x0', 'x1'], 2000), [3, 0, 0]);
      assert.deepEqual(await index.matches(['a'], ['x0', 's1', 's2'], 2000), [0], 'a prefix starts at the first block');
      assert.deepEqual(await index.matches(['a', 'b'], [], 2000), [0, 0]);
    });

    test('a hash counts for its time limit after it was last sent', async () => {
      const index = make();
      await index.record('a', ['s0', 's1'], 1000);
      await index.record('a', ['s0'], 50_000);
      assert.deepEqual(await index.matches(['a'], ['s0', 's1'], 61_000), [1], 's1 was sent 60 s ago, s0 11 s ago');
      assert.deepEqual(await index.matches(['a'], ['s0', 's1'], 111_000), [0]);
    });

    test('each replica keeps its most recently sent blocks up to its bound', async () => {
      const index = make();
      await index.record('a', chain('old', 4), 1000);
      await index.record('a', chain('new', 4), 2000);
      assert.deepEqual(await index.matches(['a'], chain('new', 4), 3000), [4]);
      assert.deepEqual(await index.matches(['a'], chain('old', 4).slice(2), 3000), [2], 'the two most recent of the old are kept');
      assert.deepEqual(await index.matches(['a'], chain('old', 4), 3000), [0], 'the first two were dropped');
    });
  });
}

test("a replica's address never appears in Redis: its key is named by a digest", async () => {
  const index = new RedisPrefixIndex(redis.admin, LIMITS);
  const replica = 'engine@http://user:s3cret-pass@10.0.0.7:8000';
  await index.record(replica, ['s0', 's1'], 1000);
  assert.deepEqual(await index.matches([replica], ['s0', 's1'], 2000), [2]);
  const names = await redis.admin.keys('*');
  assert.equal(names.length, 1);
  assert.match(names[0]!, /^tg:pfx:\{[A-Za-z0-9_-]{22}\}$/);
  assert.ok(!names.join(' ').includes('s3cret'));
});
