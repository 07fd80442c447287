// A lease's own bookkeeping: what it admits, what it tells of the limits, and how its hold in
// Redis shrinks as its requests settle and when it closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BudgetLease, BUDGET_LEASES } from '../../../../core/store/redis/redis-budget-lease.ts';
import type { Admission } from '../../../../core/store/ledger.ts';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const policy = { requests_per_minute: 10_000, tokens_per_minute: 1_000_000 };
const admission = (micros: bigint, tokens = 10, now = T0): Admission => ({
  now,
  reservation: { id: `hold-${micros}-${tokens}`, micros, ttlMs: 60_000 },
  rate: { scope: 'chat', policy, tokens },
});
const statuses = {
  requests_per_minute: { limit: 10_000, remaining: 9_000, resetMs: 60_000 },
  tokens_per_minute: { limit: 1_000_000, remaining: 900_000, resetMs: 60_000 },
};
/** A lease of room for 4 requests of 100 micros and 10 prompt tokens. */
const lease = () => new BudgetLease('lease-1', 'alice', admission(100n), 4, statuses);

test('a lease admits requests while its budget and every limit have room for them', () => {
  const l = lease();
  assert.equal(l.admit(admission(250n)), true);
  assert.equal(l.admit(admission(150n)), true);
  assert.equal(l.admit(admission(1n)), false, 'its 400 micros are taken');
  const tokens = lease();
  assert.equal(tokens.admit(admission(1n, 40)), true);
  assert.equal(tokens.admit(admission(1n, 1)), false, 'its 40 tokens are taken');
});

test('a lease admits only under the limits it was granted under, and only while open', () => {
  const l = lease();
  assert.equal(l.admit({ ...admission(1n), rate: { scope: 'chat', policy: { requests_per_minute: 5 }, tokens: 1 } }), false);
  assert.equal(l.admit(admission(1n, 1, T0 + BUDGET_LEASES.openMs)), false, 'past its time');
  l.close();
  assert.equal(l.admit(admission(1n)), false, 'closed');
});

test('the limits a request on a lease is told of count down from what the grant said', () => {
  const l = lease();
  l.admit(admission(1n, 10, T0 + 50));
  assert.deepEqual(l.statuses(T0 + 50), {
    requests_per_minute: { limit: 10_000, remaining: 8_999, resetMs: 59_950 },
    tokens_per_minute: { limit: 1_000_000, remaining: 899_990, resetMs: 59_950 },
  });
});

test('while open, what a settled request did not cost goes back to the lease; its hold in Redis shrinks by the cost', () => {
  const l = lease();
  l.admit(admission(400n));
  assert.deepEqual(l.settle(400n, 150n), { before: 400n, after: 250n });
  assert.equal(l.admit(admission(250n)), true, 'the 250 not spent can be admitted again');
  assert.equal(l.admit(admission(1n)), false);
});

test('closing leaves held what requests in flight hold, gives back the unused limits, and their settlement releases the rest', () => {
  const l = lease();
  l.admit(admission(100n, 10));
  l.admit(admission(100n, 10));
  assert.deepEqual(l.settle(100n, 60n), { before: 400n, after: 340n });
  const { hold, unused } = l.close();
  assert.deepEqual(hold, { before: 340n, after: 100n });
  assert.deepEqual(unused, [2, 0, 20, 0], 'requests and tokens per minute not used; no daily limits');
  assert.deepEqual(l.settle(100n, 100n), { before: 100n, after: 0n });
});
