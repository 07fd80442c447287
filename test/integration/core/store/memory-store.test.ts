// The store contract on the in-memory store, and what only the memory store has: a cap on
// the records kept per user.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryStore } from '../../../../core/store/memory/memory-store.ts';
import { describeStoreContract, RESPONSE_LIMITS, RETENTION_MS, usageRecord } from './contract.ts';
import { MemoryResponses } from '../../../../core/store/memory/memory-responses.ts';

describeStoreContract('memory store', {
  make: async () => new MemoryStore({ usageRetentionMs: RETENTION_MS, responseLimits: RESPONSE_LIMITS }),
  dispose: (store) => store.close(),
  // One process, one store: a "second gateway" shares the very same object.
  peer: async (store) => store,
});

describe('memory store: bounds', () => {
  test("past the process's most bytes of stored responses, the oldest of any user go first", async () => {
    const responses = new MemoryResponses(RETENTION_MS, { limits: { bytesPerUser: 10_000, countPerUser: 100 }, processBytes: 5_000 });
    const json = (n: number) => JSON.stringify({ response: {}, messages: [{ content: 'x'.repeat(n) }] });
    await responses.put('alice', 'a1', json(2000));
    await responses.put('bob', 'b1', json(2000));
    await responses.put('carol', 'c1', json(2000));
    assert.equal(await responses.get('alice', 'a1'), undefined);
    assert.ok(await responses.get('bob', 'b1'));
    assert.ok(await responses.get('carol', 'c1'));
    assert.ok(responses.bytes <= 5_000);
  });

  test('past the most records per user, the oldest are dropped', async () => {
    const store = new MemoryStore({ usageRetentionMs: RETENTION_MS, maxUsageRecordsPerUser: 3 });
    const base = Date.now() - 60_000;
    const list = [0, 1, 2, 3, 4].map((i) => usageRecord('alice', base + i * 1000));
    for (const record of list) await store.usage.append(record);
    const page = await store.usage.query('alice', { limit: 10 });
    assert.deepEqual(page.records, [list[4], list[3], list[2]]);
    assert.equal(page.totals.requests, 3);
  });

  test('retention is measured on the clock it is given', async () => {
    let now = Date.UTC(2026, 5, 1);
    const store = new MemoryStore({ usageRetentionMs: 60_000, now: () => now });
    await store.usage.append(usageRecord('alice', now));
    assert.equal((await store.usage.query('alice', { limit: 10 })).records.length, 1);
    now += 60_001;
    assert.equal((await store.usage.query('alice', { limit: 10 })).records.length, 0);
  });
});
