// The block pool's bookkeeping on its own: hash chains name equal prefixes alike, leases hold and
// give back blocks, cached blocks are shared while held and evicted least recently freed first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BlockPool, blockHashes } from '../../../support/vllm-emulator/prefix-cache.ts';

const ids = (length: number, from = 0) => Array.from({ length }, (_, i) => from + i);

test('a hash chain names whole blocks only, and equal prefixes alike', () => {
  const long = blockHashes(ids(50), 16);
  assert.equal(long.length, 3, 'the 2 tokens past the third block make no block');
  assert.deepEqual(blockHashes(ids(32), 16), long.slice(0, 2));
  const changedFirst = blockHashes([99, ...ids(49, 1)], 16);
  assert.ok(
    changedFirst.every((hash, i) => hash !== long[i]),
    'a change in block 1 renames every block after it',
  );
});

test('a lease holds its blocks; released, named ones stay cached and unnamed ones come free', () => {
  const pool = new BlockPool(10);
  const hashes = blockHashes(ids(48), 16);
  const lease = pool.lease([], 5);
  pool.register(lease, hashes);
  assert.equal(pool.heldBlocks, 5);
  assert.equal(pool.cachedBlocks, 3);
  pool.release(lease);
  pool.release(lease);
  assert.equal(pool.heldBlocks, 0);
  assert.equal(pool.cachedPrefix(hashes), 3);
  assert.ok(pool.canLease([], 10), 'cached blocks can be evicted for room');
});

test('held cached blocks are shared, and never evicted', () => {
  const pool = new BlockPool(6);
  const hashes = blockHashes(ids(64), 16);
  const first = pool.lease([], 4);
  pool.register(first, hashes);
  const second = pool.lease(hashes.slice(0, 4), 2);
  assert.equal(pool.heldBlocks, 6, 'four shared blocks count once');
  assert.equal(pool.canLease([], 1), false);
  pool.release(first);
  assert.equal(pool.canLease([], 1), false, 'still held by the second lease');
  pool.release(second);
  assert.equal(pool.canLease([], 6), true);
});

test('a name registered by another request first stays theirs; the copy stays unnamed', () => {
  const pool = new BlockPool(10);
  const hashes = blockHashes(ids(32), 16);
  const a = pool.lease([], 2);
  const b = pool.lease([], 2);
  pool.register(a, hashes);
  pool.register(b, hashes);
  assert.equal(pool.cachedBlocks, 2);
  assert.equal(b.unnamed, 2);
  pool.release(a);
  pool.release(b);
  assert.equal(pool.heldBlocks, 0);
  assert.equal(pool.cachedBlocks, 2);
});

test('asking for more than there is room for throws', () => {
  const pool = new BlockPool(2);
  assert.throws(() => pool.lease([], 3), /no room/);
});
